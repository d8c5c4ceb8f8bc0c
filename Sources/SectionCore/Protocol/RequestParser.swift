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
    return request(verb, after: &words)
  }

  /// The request of `verb` that the rest of `words` makes, or the refusal of them: the one
  /// path from words to a `Request`, for a line and for a face's own words (`Request.mode`).
  /// Inlined with the reader, as `parse` runs it for every request.
  @inline(__always)
  static func request(_ verb: Verb, after words: inout Words) -> Result<Request, ProtocolError> {
    do {
      let (form, arguments) = try ArgumentReader.read(verb, &words)
      return .success(Request(verb, form: form, arguments, in: words.line))
    } catch {
      return .failure(error)
    }
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
    if line.withUnsafeBufferPointer(isPrintableASCII) { return nil }
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

  /// Whether every byte is printable ASCII (0x20-0x7E), which passes a line without looking
  /// further: eight bytes at a time (callgrind, a TOGGLE's line: 156 instructions byte by byte
  /// with a range check, ~60 with one compare a byte, ~25 so).
  private static func isPrintableASCII(_ bytes: UnsafeBufferPointer<UInt8>) -> Bool {
    guard let base = bytes.baseAddress else { return true }
    var index = 0
    while index &+ 8 <= bytes.count {
      let eight = UnsafeRawPointer(base + index).loadUnaligned(as: UInt64.self)
      // A byte's top bit is set in `below` if it is under 0x20 (it borrows), in `above` if it
      // is 0x7F or more; a borrow or carry that spills into the next byte comes only from a
      // byte that is itself out of range, so the answer is right whichever byte shows it.
      let below = eight &- 0x2020_2020_2020_2020
      let above = eight &+ 0x0101_0101_0101_0101
      if (below | above | eight) & 0x8080_8080_8080_8080 != 0 { return false }
      index &+= 8
    }
    while index < bytes.count {
      if bytes[index] &- 0x20 >= 0x5F { return false }
      index &+= 1
    }
    return true
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
  /// The whole line the words are of.
  let line: ArraySlice<UInt8>
  private var position: Int

  init(_ line: ArraySlice<UInt8>) {
    self.line = line
    position = line.startIndex
  }

  mutating func next() -> ArraySlice<UInt8>? {
    guard let range = nextRange() else { return nil }
    return line[range]
  }

  /// Where the next word is: the request path's reading, which slices the line only where a
  /// request keeps a word (each slice retains the line's buffer).
  @inline(__always)
  mutating func nextRange() -> Range<Int>? {
    while position < line.endIndex, isSeparator(line[position]) { position += 1 }
    guard position < line.endIndex else { return nil }
    let start = position
    while position < line.endIndex, !isSeparator(line[position]) { position += 1 }
    return start..<position
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

  /// Where `rest()` from `start` is, the start of a word already read: a text whose first word
  /// was read before it was known to be a text.
  mutating func rest(from start: Int) -> Range<Int> {
    var end = line.endIndex
    while end > start, isSeparator(line[end - 1]) { end -= 1 }
    position = line.endIndex
    return start..<end
  }

  private func isSeparator(_ byte: UInt8) -> Bool { byte == 0x20 || byte == 0x09 }
}
