import SectionGrammar

/// Turns one request line (without its LF) into a `Request`, working on the bytes as they came.
///
/// The line is checked whole first (no NUL, no control characters, valid UTF-8), then split on
/// spaces and tabs. Verbs and the words ALL, exclusive and multi are case-insensitive.
public enum RequestParser {
  /// Why a line is blank or what it asks. Blank lines (nothing but spaces and tabs) get no reply.
  public static func parse(_ line: ArraySlice<UInt8>) -> Result<Request, ProtocolError>? {
    if let problem = checkCharacters(line) { return .failure(problem) }
    var words = Words(line)
    guard let verbWord = words.next() else { return nil }
    guard let verb = Verb(verbWord) else {
      return .failure(
        ProtocolError(
          .unknown,
          "unknown command \"\(String(decoding: verbWord, as: UTF8.self))\"; HELP lists the commands"))
    }
    if verb.isEdit { return verb.editRequest(&words) }
    if verb.isAboutHistory { return verb.historyRequest(&words) }
    let argument = words.next()
    let request = verb.request(argument: argument)
    if case .success = request, let extra = words.next() {
      return .failure(
        ProtocolError(
          .syntax, "unexpected \"\(String(decoding: extra, as: UTF8.self))\": usage: \(verb.usage)"))
    }
    return request
  }

  /// Whether `line` is PING and nothing else (in any case), which `parse` would read as `.ping`.
  static func isPing(_ line: ArraySlice<UInt8>) -> Bool { line.withUnsafeBufferPointer(isPing) }

  static func isPing(_ line: UnsafeBufferPointer<UInt8>) -> Bool {
    guard line.count == 4 else { return false }
    // The four bytes as one little-endian word; setting bit 5 of each lower-cases a letter and
    // turns no other byte into one of "ping" (0x70 0x69 0x6E 0x67).
    let word = UInt32(littleEndian: UnsafeRawPointer(line.baseAddress!).loadUnaligned(as: UInt32.self))
    return word | 0x2020_2020 == 0x676E_6970
  }

  /// Whether `line` is END (the word alone, in any case, spaces around it allowed).
  static func isEnd(_ line: ArraySlice<UInt8>) -> Bool {
    var words = Words(line)
    guard let word = words.next(), asciiCaseInsensitiveEquals(word, "end") else { return false }
    return words.next() == nil
  }

  /// A line may hold any UTF-8 text but no control characters (tab separates words).
  static func checkCharacters(_ line: ArraySlice<UInt8>) -> ProtocolError? {
    // Printable ASCII (0x20-0x7E) passes with one compare a byte; anything else is looked at
    // closely (callgrind: 156 -> ~60 instructions for a TOGGLE's line).
    let isPrintableASCII = line.withUnsafeBufferPointer { bytes in
      bytes.allSatisfy { $0 &- 0x20 < 0x5F }
    }
    if isPrintableASCII { return nil }
    var isASCII = true
    for byte in line {
      if byte == 0 { return ProtocolError(.syntax, "NUL byte in request") }
      if (byte < 0x20 && byte != 0x09) || byte == 0x7F {
        return ProtocolError(.syntax, "control character 0x\(String(byte, radix: 16)) in request")
      }
      if byte >= 0x80 { isASCII = false }
    }
    if !isASCII && String(validating: line, as: UTF8.self) == nil {
      return ProtocolError(.syntax, "request is not valid UTF-8")
    }
    return nil
  }

  /// A section reference: all digits is an index, anything else an id.
  static func sectionRef(_ word: ArraySlice<UInt8>) -> SectionRef {
    var value = 0
    for byte in word {
      guard (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) else { return .id(word) }
      let (times10, overflow1) = value.multipliedReportingOverflow(by: 10)
      let (sum, overflow2) = times10.addingReportingOverflow(Int(byte - UInt8(ascii: "0")))
      value = overflow1 || overflow2 ? Int.max : sum
    }
    return .index(value)
  }

  /// A word of digits as a revision, or nil when it is anything else or past 2^64-1 (also the
  /// revision in a shared log's key).
  package static func revision(_ word: ArraySlice<UInt8>) -> UInt64? {
    guard !word.isEmpty else { return nil }
    var value: UInt64 = 0
    for byte in word {
      guard (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) else { return nil }
      let (times10, overflow1) = value.multipliedReportingOverflow(by: 10)
      let (sum, overflow2) = times10.addingReportingOverflow(UInt64(byte - UInt8(ascii: "0")))
      if overflow1 || overflow2 { return nil }
      value = sum
    }
    return value
  }

  /// A non-negative number, or nil when the word is anything else; too large reads as Int.max.
  static func number(_ word: ArraySlice<UInt8>) -> Int? {
    guard case .index(let value) = sectionRef(word) else { return nil }
    return value
  }
}

/// The words of a line, separated by runs of spaces and tabs; slices, not copies.
struct Words {
  private let line: ArraySlice<UInt8>
  private var position: Int

  init(_ line: ArraySlice<UInt8>) {
    self.line = line
    position = line.startIndex
  }

  mutating func next() -> ArraySlice<UInt8>? {
    while position < line.endIndex, isSeparator(line[position]) { position += 1 }
    guard position < line.endIndex else { return nil }
    let start = position
    while position < line.endIndex, !isSeparator(line[position]) { position += 1 }
    return line[start..<position]
  }

  /// Everything after the next run of separators, without separators at its end: a title or
  /// an item text, spaces inside kept. Nil when nothing is left.
  mutating func rest() -> ArraySlice<UInt8>? {
    while position < line.endIndex, isSeparator(line[position]) { position += 1 }
    var end = line.endIndex
    while end > position, isSeparator(line[end - 1]) { end -= 1 }
    guard position < end else { return nil }
    defer { position = line.endIndex }
    return line[position..<end]
  }

  private func isSeparator(_ byte: UInt8) -> Bool { byte == 0x20 || byte == 0x09 }
}
