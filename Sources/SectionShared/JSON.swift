/// A JSON value: enough of JSON for the config file, the state file and sectionctl's output.
/// Here, beside what the daemon and the library share, because the daemon and sectionctl both
/// write it; public, so that a program that prints what it reads as JSON (as `sectionctl
/// --json` does) or reads sectiond's config file needs no second JSON library.
///
/// Written here rather than taken from Foundation so that the daemon does not map ICU, and
/// so the config loader can be fuzzed without Foundation in the way.
public enum JSON: Equatable, Sendable {
  case null
  case bool(Bool)
  case integer(Int64)
  case number(Double)
  case string(String)
  case array([JSON])
  /// Members in the order they appeared (or were built), so output is stable.
  case object([(String, JSON)])

  public static func == (lhs: JSON, rhs: JSON) -> Bool {
    switch (lhs, rhs) {
    case (.null, .null): true
    case (.bool(let a), .bool(let b)): a == b
    case (.integer(let a), .integer(let b)): a == b
    case (.number(let a), .number(let b)): a == b
    case (.string(let a), .string(let b)): a == b
    case (.array(let a), .array(let b)): a == b
    case (.object(let a), .object(let b)): a.elementsEqual(b) { $0.0 == $1.0 && $0.1 == $1.1 }
    default: false
    }
  }

  /// The member `key` of an object; nil for anything else.
  public subscript(key: String) -> JSON? {
    guard case .object(let members) = self else { return nil }
    return members.first { $0.0 == key }?.1
  }

  /// What kind of value this is, for error messages ("expected a string, found an array").
  public var kind: String {
    switch self {
    case .null: "null"
    case .bool: "a boolean"
    case .integer, .number: "a number"
    case .string: "a string"
    case .array: "an array"
    case .object: "an object"
    }
  }
}

/// A JSON document that could not be parsed, with where and why.
public struct JSONError: Error, Equatable, CustomStringConvertible {
  public let line: Int
  public let column: Int
  public let reason: String
  public var description: String { "line \(line), column \(column): \(reason)" }

  package init(line: Int, column: Int, reason: String) {
    self.line = line
    self.column = column
    self.reason = reason
  }
}

extension JSON {
  /// Parses a whole document. Nesting is capped so that hostile input cannot exhaust the stack.
  public static func parse(_ bytes: some Collection<UInt8>) throws(JSONError) -> JSON {
    var parser = JSONParser(Array(bytes))
    return try parser.document()
  }

  /// The compact serialization, with members in order: `{"a":1,"b":[true,null]}`.
  public func serialized() -> String { String(decoding: serializedBytes(), as: UTF8.self) }

  /// `serialized()` as the bytes a request sends, without the String between (a fleet host
  /// sends one a change).
  public func serializedBytes() -> [UInt8] {
    var output: [UInt8] = []
    write(to: &output)
    return output
  }

  /// Writes the compact text; only error messages and sectionctl's output take this path, so it
  /// is written plainly (the state file's strings come through `appendString`).
  private func write(to output: inout [UInt8]) {
    switch self {
    case .null: output += "null".utf8
    case .bool(let value): output += (value ? "true" : "false").utf8
    case .integer(let value): output += String(value).utf8
    case .number(let value): output += (value.isFinite ? "\(value)" : "null").utf8
    case .string(let value): JSON.appendString(value, to: &output)
    case .array(let elements):
      output.append(UInt8(ascii: "["))
      for (index, element) in elements.enumerated() {
        if index > 0 { output.append(UInt8(ascii: ",")) }
        element.write(to: &output)
      }
      output.append(UInt8(ascii: "]"))
    case .object(let members):
      output.append(UInt8(ascii: "{"))
      for (index, (key, value)) in members.enumerated() {
        if index > 0 { output.append(UInt8(ascii: ",")) }
        JSON.appendString(key, to: &output)
        output.append(UInt8(ascii: ":"))
        value.write(to: &output)
      }
      output.append(UInt8(ascii: "}"))
    }
  }

  /// Appends `value` as a JSON string, escaping what JSON requires and nothing more.
  package static func appendString(_ value: String, to output: inout [UInt8]) {
    var value = value
    value.withUTF8 { appendValidUTF8($0, to: &output) }
  }

  /// `bytes` as `appendString` writes `String(decoding: bytes, as: UTF8.self)`, without making
  /// the String when they are ASCII (valid UTF-8 as they are): the history's lines, a thousand
  /// at each compaction.
  package static func appendString(utf8 bytes: UnsafeBufferPointer<UInt8>, to output: inout [UInt8]) {
    guard !bytes.contains(where: { $0 >= 0x80 }) else {
      return appendString(String(decoding: bytes, as: UTF8.self), to: &output)
    }
    appendValidUTF8(bytes, to: &output)
  }

  /// `bytes`, valid UTF-8, as a JSON string: the one writer of both `appendString`s.
  private static func appendValidUTF8(_ bytes: UnsafeBufferPointer<UInt8>, to output: inout [UInt8]) {
    output.append(UInt8(ascii: "\""))
    // Most titles and items need no escape: one copy, not an append per byte (the state
    // file is written whole at each compaction, 2 MB and more for a long list).
    if bytes.contains(where: { $0 < 0x20 || $0 == UInt8(ascii: "\"") || $0 == UInt8(ascii: "\\") }) {
      appendEscaped(bytes, to: &output)
    } else {
      output.append(contentsOf: bytes)
    }
    output.append(UInt8(ascii: "\""))
  }

  /// Counts the escaped length first, then writes in place: appending byte by byte took a
  /// quarter of the time of writing a state file of quote-dense items.
  private static func appendEscaped(_ bytes: UnsafeBufferPointer<UInt8>, to output: inout [UInt8]) {
    var length = 0
    for byte in bytes {
      switch byte {
      case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "\n"), UInt8(ascii: "\r"), UInt8(ascii: "\t"):
        length += 2
      case 0..<0x20: length += 6
      default: length += 1
      }
    }
    var at = output.count
    output.append(contentsOf: repeatElement(0, count: length))
    output.withUnsafeMutableBufferPointer { out in
      func put(_ byte: UInt8) {
        out[at] = byte
        at += 1
      }
      for byte in bytes {
        switch byte {
        case UInt8(ascii: "\""), UInt8(ascii: "\\"):
          put(UInt8(ascii: "\\"))
          put(byte)
        case UInt8(ascii: "\n"):
          put(UInt8(ascii: "\\"))
          put(UInt8(ascii: "n"))
        case UInt8(ascii: "\r"):
          put(UInt8(ascii: "\\"))
          put(UInt8(ascii: "r"))
        case UInt8(ascii: "\t"):
          put(UInt8(ascii: "\\"))
          put(UInt8(ascii: "t"))
        case 0..<0x20:
          for digit in [UInt8(ascii: "\\"), UInt8(ascii: "u"), UInt8(ascii: "0"), UInt8(ascii: "0")] {
            put(digit)
          }
          put(hexDigits[Int(byte >> 4)])
          put(hexDigits[Int(byte & 0xF)])
        default: put(byte)
        }
      }
    }
  }

  private static let hexDigits = Array("0123456789abcdef".utf8)
}

/// A recursive-descent parser over bytes (RFC 8259, strict: no comments, no trailing commas).
struct JSONParser {
  static let maximumDepth = 64
  private let bytes: [UInt8]
  private var position = 0
  private var depth = 0
  /// A string with escapes, as it is decoded; as long as the longest such string so far.
  private var scratch: [UInt8] = []

  init(_ bytes: [UInt8]) { self.bytes = bytes }

  mutating func document() throws(JSONError) -> JSON {
    if bytes.starts(with: [0xEF, 0xBB, 0xBF]) { position = 3 }
    let value = try self.value()
    skipWhitespace()
    if position < bytes.count { throw failure("unexpected text after the end of the document") }
    return value
  }

  private mutating func value() throws(JSONError) -> JSON {
    skipWhitespace()
    guard position < bytes.count else { throw failure("unexpected end of input, expected a value") }
    switch bytes[position] {
    case UInt8(ascii: "{"): return try nested { (parser) throws(JSONError) in try parser.object() }
    case UInt8(ascii: "["): return try nested { (parser) throws(JSONError) in try parser.array() }
    case UInt8(ascii: "\""): return .string(try string())
    case UInt8(ascii: "t"): return try literal("true", .bool(true))
    case UInt8(ascii: "f"): return try literal("false", .bool(false))
    case UInt8(ascii: "n"): return try literal("null", .null)
    case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): return try number()
    default: throw failure("unexpected character \(JSONParser.describe(bytes[position])), expected a value")
    }
  }

  private mutating func nested(_ body: (inout JSONParser) throws(JSONError) -> JSON) throws(JSONError) -> JSON
  {
    depth += 1
    defer { depth -= 1 }
    if depth > JSONParser.maximumDepth {
      throw failure("nested deeper than \(JSONParser.maximumDepth) levels")
    }
    return try body(&self)
  }

  private mutating func object() throws(JSONError) -> JSON {
    position += 1
    var members: [(String, JSON)] = []
    skipWhitespace()
    if consume(UInt8(ascii: "}")) { return .object(members) }
    while true {
      skipWhitespace()
      guard position < bytes.count, bytes[position] == UInt8(ascii: "\"") else {
        throw failure("expected a member name in double quotes")
      }
      let key = try string()
      skipWhitespace()
      guard consume(UInt8(ascii: ":")) else { throw failure("expected ':' after member name \"\(key)\"") }
      members.append((key, try value()))
      skipWhitespace()
      if consume(UInt8(ascii: ",")) { continue }
      if consume(UInt8(ascii: "}")) { return .object(members) }
      throw failure("expected ',' or '}' in an object")
    }
  }

  private mutating func array() throws(JSONError) -> JSON {
    position += 1
    var elements: [JSON] = []
    skipWhitespace()
    if consume(UInt8(ascii: "]")) { return .array(elements) }
    while true {
      elements.append(try value())
      skipWhitespace()
      if consume(UInt8(ascii: ",")) { continue }
      if consume(UInt8(ascii: "]")) { return .array(elements) }
      throw failure("expected ',' or ']' in an array")
    }
  }

  // The string scanners below compare bytes with numbers, 0x22 for `"` and 0x5C for `\`: in
  // the debug build the tests run, each `UInt8(ascii:)` is a call, dozens an escape.

  /// A string value. A string without escapes (most of them) becomes the String in one copy;
  /// one with escapes is decoded into `scratch` through pointers and made a String once.
  /// Appending scalar by scalar to a String cost 0.45 us an escape: a state file of 120 MB of
  /// `"` took half a minute to load.
  private mutating func string() throws(JSONError) -> String {
    position += 1
    let start = position
    let (end, ascii) = plainRun(from: start)
    if end < bytes.count, bytes[end] == 0x22 {
      position = end
      defer { position += 1 }
      return try validated(bytes[start..<end], ascii: ascii)
    }
    return try escapedString(from: start, ascii: ascii)
  }

  /// Where the run of bytes from `start` that need no attention ends (at a quote, a backslash,
  /// a control character, or the end of the input), and whether it is all ASCII.
  private func plainRun(from start: Int) -> (end: Int, ascii: Bool) {
    bytes.withUnsafeBufferPointer { buffer in
      var index = start
      var seen: UInt8 = 0
      while index < buffer.count {
        let byte = buffer[index]
        if byte == 0x22 || byte == 0x5C || byte < 0x20 { break }
        seen |= byte
        index += 1
      }
      return (index, seen < 0x80)
    }
  }

  /// The string from `start` that has escapes, control characters or no end. Its closing
  /// quote is found first; since an escape is never shorter than what it stands for, the
  /// decoded bytes fit in as many as the string takes, and are written without a check
  /// of capacity per byte.
  private mutating func escapedString(from start: Int, ascii: Bool) throws(JSONError) -> String {
    let bytes = self.bytes
    let closing: Int? = bytes.withUnsafeBufferPointer { buffer in
      var index = start
      while index < buffer.count {
        switch buffer[index] {
        case 0x22: return index
        case 0x5C: index += 2
        default: index += 1
        }
      }
      return nil
    }
    let end = closing ?? bytes.count
    if scratch.count < max(end - start, 1) { scratch = [UInt8](repeating: 0, count: max(end - start, 1)) }
    var ascii = ascii
    var problem: (at: Int, reason: String)?
    let length = scratch.withUnsafeMutableBufferPointer { output in
      bytes.withUnsafeBufferPointer { input in
        var from = start
        var to = 0
        func put(_ scalar: Unicode.Scalar) {
          ascii = ascii && scalar.isASCII
          UTF8.encode(scalar) { byte in
            output[to] = byte
            to += 1
          }
        }
        // The four hex digits at `at`, or nil with the problem at the first that is not one.
        func hexQuad(at: Int) -> UInt32? {
          var value: UInt32 = 0
          for index in at..<(at + 4) {
            guard index < input.count, let digit = JSONParser.hexValue(input[index]) else {
              problem = (index, "expected four hex digits after \\u")
              return nil
            }
            value = value << 4 | digit
          }
          return value
        }
        // Raw pointers in the loop: also in the debug build the tests run, an escape then
        // costs a few calls rather than a few dozen.
        let (source, target) = (input.baseAddress!, output.baseAddress!)
        var seen: UInt8 = 0
        defer { ascii = ascii && seen < 0x80 }
        while from < end {
          let byte = source[from]
          if byte >= 0x20 && byte != 0x5C {
            seen |= byte
            target[to] = byte
            to += 1
            from += 1
            continue
          }
          if byte == 0x5C, from + 1 < end, let simple = JSONParser.simpleEscape(source[from + 1]) {
            target[to] = simple
            to += 1
            from += 2
            continue
          }
          guard byte == 0x5C else {
            problem = (from, "control character \(JSONParser.describe(byte)) in a string; escape it")
            break
          }
          guard from + 1 < input.count else {
            problem = (from + 1, "unterminated escape")
            break
          }
          let escaped = input[from + 1]
          if let simple = JSONParser.simpleEscape(escaped) {
            output[to] = simple
            to += 1
            from += 2
            continue
          }
          guard escaped == UInt8(ascii: "u") else {
            problem = (from + 2, "invalid escape \\\(JSONParser.describe(escaped))")
            break
          }
          guard let first = hexQuad(at: from + 2) else { break }
          from += 6
          guard (0xD800..<0xDC00).contains(first) else {
            guard let scalar = Unicode.Scalar(first) else {
              problem = (from, "unpaired surrogate")
              break
            }
            put(scalar)
            continue
          }
          guard from + 1 < input.count, input[from] == 0x5C,
            input[from + 1] == UInt8(ascii: "u")
          else {
            let consumed = from < input.count && input[from] == 0x5C ? 1 : 0
            problem = (from + consumed, "unpaired surrogate \\u\(String(first, radix: 16))")
            break
          }
          guard let second = hexQuad(at: from + 2) else { break }
          from += 6
          guard (0xDC00..<0xE000).contains(second) else {
            problem = (from, "invalid low surrogate")
            break
          }
          put(Unicode.Scalar(0x10000 + ((first - 0xD800) << 10) + (second - 0xDC00))!)
        }
        return to
      }
    }
    if let problem {
      position = problem.at
      throw failure(problem.reason)
    }
    position = end
    guard closing != nil else { throw failure("unterminated string") }
    defer { position += 1 }
    return try validated(scratch[..<length], ascii: ascii)
  }

  /// What the escape `\<byte>` stands for, when it is one of the escapes of one character.
  private static func simpleEscape(_ byte: UInt8) -> UInt8? {
    switch byte {
    case 0x22, 0x5C, 0x2F: byte  // \" \\ \/
    case 0x62: 0x08  // \b
    case 0x66: 0x0C  // \f
    case 0x6E: 0x0A  // \n
    case 0x72: 0x0D  // \r
    case 0x74: 0x09  // \t
    default: nil
    }
  }

  /// The string of UTF-8 `run`. ASCII needs no validation; the rest goes through the
  /// standard library's (generic, and a fifth of a load's time when every string took it).
  private func validated(_ run: ArraySlice<UInt8>, ascii: Bool) throws(JSONError) -> String {
    let text = run.withUnsafeBufferPointer { buffer in
      ascii ? Optional(String(decoding: buffer, as: UTF8.self)) : String(validating: buffer, as: UTF8.self)
    }
    guard let text else { throw failure("invalid UTF-8 in a string") }
    return text
  }

  private mutating func number() throws(JSONError) -> JSON {
    let start = position
    var isInteger = true
    _ = consume(UInt8(ascii: "-"))
    let integerStart = position
    let integerDigits = digits()
    guard integerDigits > 0 else { throw failure("expected a digit") }
    if integerDigits > 1 && bytes[integerStart] == UInt8(ascii: "0") {
      throw failure("a number may not start with 0 followed by digits")
    }
    if consume(UInt8(ascii: ".")) {
      isInteger = false
      guard digits() > 0 else { throw failure("expected a digit after '.'") }
    }
    if position < bytes.count, bytes[position] | 0x20 == UInt8(ascii: "e") {
      isInteger = false
      position += 1
      if !consume(UInt8(ascii: "+")) { _ = consume(UInt8(ascii: "-")) }
      guard digits() > 0 else { throw failure("expected a digit in the exponent") }
    }
    let text = String(decoding: bytes[start..<position], as: UTF8.self)
    if isInteger, let value = Int64(text) { return .integer(value) }
    guard let value = Double(text), value.isFinite else { throw failure("number \(text) is out of range") }
    return .number(value)
  }

  private mutating func digits() -> Int {
    let start = position
    while position < bytes.count, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(bytes[position]) {
      position += 1
    }
    return position - start
  }

  private mutating func literal(_ word: String, _ value: JSON) throws(JSONError) -> JSON {
    let expected = Array(word.utf8)
    guard bytes[position...].starts(with: expected) else {
      throw failure("invalid literal, expected \(word)")
    }
    position += expected.count
    return value
  }

  private mutating func skipWhitespace() {
    while position < bytes.count {
      switch bytes[position] {
      case 0x20, 0x09, 0x0A, 0x0D: position += 1
      default: return
      }
    }
  }

  private mutating func consume(_ byte: UInt8) -> Bool {
    guard position < bytes.count, bytes[position] == byte else { return false }
    position += 1
    return true
  }

  private static func hexValue(_ byte: UInt8) -> UInt32? {
    switch byte {
    case UInt8(ascii: "0")...UInt8(ascii: "9"): UInt32(byte - UInt8(ascii: "0"))
    case UInt8(ascii: "a")...UInt8(ascii: "f"): UInt32(byte - UInt8(ascii: "a") + 10)
    case UInt8(ascii: "A")...UInt8(ascii: "F"): UInt32(byte - UInt8(ascii: "A") + 10)
    default: nil
    }
  }

  private static func describe(_ byte: UInt8) -> String {
    (0x21..<0x7F).contains(byte) ? "'\(Character(Unicode.Scalar(byte)))'" : "0x\(String(byte, radix: 16))"
  }

  private func failure(_ reason: String) -> JSONError {
    var line = 1
    var column = 1
    for byte in bytes[..<min(position, bytes.count)] {
      if byte == 0x0A { line += 1; column = 1 } else { column += 1 }
    }
    return JSONError(line: line, column: column, reason: reason)
  }
}
