/// A JSON value: enough of JSON for the config file, the state file and sectionctl's output.
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
}

extension JSON {
  /// Parses a whole document. Nesting is capped so that hostile input cannot exhaust the stack.
  public static func parse(_ bytes: some Collection<UInt8>) throws(JSONError) -> JSON {
    var parser = JSONParser(Array(bytes))
    return try parser.document()
  }

  /// The compact serialization, with members in order: `{"a":1,"b":[true,null]}`.
  public func serialized() -> String {
    var output: [UInt8] = []
    write(to: &output)
    return String(decoding: output, as: UTF8.self)
  }

  private func write(to output: inout [UInt8]) {
    switch self {
    case .null: output.append("null")
    case .bool(let value): output.append(value ? "true" : "false")
    case .integer(let value):
      if value < 0 { output.append("-") }
      output.appendDecimal(value.magnitude)
    case .number(let value): output.append(utf8: value.isFinite ? "\(value)" : "null")
    case .string(let value): JSON.appendString(value, to: &output)
    case .array(let elements):
      output.append("[")
      for (index, element) in elements.enumerated() {
        if index > 0 { output.append(",") }
        element.write(to: &output)
      }
      output.append("]")
    case .object(let members):
      output.append("{")
      for (index, (key, value)) in members.enumerated() {
        if index > 0 { output.append(",") }
        JSON.appendString(key, to: &output)
        output.append(":")
        value.write(to: &output)
      }
      output.append("}")
    }
  }

  /// Appends `value` as a JSON string, escaping what JSON requires and nothing more.
  static func appendString(_ value: String, to output: inout [UInt8]) {
    output.append("\"")
    var value = value
    value.withUTF8 { bytes in
      // Most titles and items need no escape: one copy, not an append per byte (the state
      // file is written whole at each compaction, 2 MB and more for a long list).
      if bytes.contains(where: { $0 < 0x20 || $0 == UInt8(ascii: "\"") || $0 == UInt8(ascii: "\\") }) {
        appendEscaped(bytes, to: &output)
      } else {
        output.append(contentsOf: bytes)
      }
    }
    output.append("\"")
  }

  private static func appendEscaped(_ bytes: UnsafeBufferPointer<UInt8>, to output: inout [UInt8]) {
    for byte in bytes {
      switch byte {
      case UInt8(ascii: "\""): output.append("\\\"")
      case UInt8(ascii: "\\"): output.append("\\\\")
      case UInt8(ascii: "\n"): output.append("\\n")
      case UInt8(ascii: "\r"): output.append("\\r")
      case UInt8(ascii: "\t"): output.append("\\t")
      case 0..<0x20:
        output.append("\\u00")
        output.append(hexDigits[Int(byte >> 4)])
        output.append(hexDigits[Int(byte & 0xF)])
      default: output.append(byte)
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
  /// A string with escapes, as it is decoded.
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
    default: throw failure("unexpected character \(describe(bytes[position])), expected a value")
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

  /// A string value. Its bytes are scanned once: a run without escapes becomes the String in
  /// one validating copy; a string with escapes is assembled in `scratch` (reused) and
  /// validated once at its end. Appending scalar by scalar to a String cost 0.45 us an escape,
  /// and made a state file of 120 MB of `"` take half a minute to load.
  private mutating func string() throws(JSONError) -> String {
    position += 1
    let start = position
    var end = endOfPlainRun(from: start)
    if end < bytes.count, bytes[end] == UInt8(ascii: "\"") {
      position = end
      defer { position += 1 }
      return try validated(bytes[start..<end])
    }
    scratch.removeAll(keepingCapacity: true)
    var runStart = start
    while end < bytes.count {
      let byte = bytes[end]
      if byte == UInt8(ascii: "\"") {
        scratch.append(contentsOf: bytes[runStart..<end])
        position = end
        defer { position += 1 }
        return try validated(scratch[...])
      }
      position = end
      if byte < 0x20 { throw failure("control character \(describe(byte)) in a string; escape it") }
      scratch.append(contentsOf: bytes[runStart..<end])
      try escape()
      runStart = position
      end = endOfPlainRun(from: position)
    }
    position = end
    throw failure("unterminated string")
  }

  /// Where the run of bytes from `start` that need no attention ends: at a quote, a backslash,
  /// a control character, or the end of the input.
  private func endOfPlainRun(from start: Int) -> Int {
    bytes.withUnsafeBufferPointer { buffer in
      var index = start
      while index < buffer.count {
        let byte = buffer[index]
        if byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\") || byte < 0x20 { break }
        index += 1
      }
      return index
    }
  }

  private func validated(_ run: ArraySlice<UInt8>) throws(JSONError) -> String {
    let text = run.withUnsafeBufferPointer { String(validating: $0, as: UTF8.self) }
    guard let text else { throw failure("invalid UTF-8 in a string") }
    return text
  }

  /// Decodes the escape at `position` and appends its UTF-8 to `scratch`.
  private mutating func escape() throws(JSONError) {
    position += 1
    guard position < bytes.count else { throw failure("unterminated escape") }
    let byte = bytes[position]
    position += 1
    let simple: UInt8
    switch byte {
    case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"): simple = byte
    case UInt8(ascii: "b"): simple = 0x08
    case UInt8(ascii: "f"): simple = 0x0C
    case UInt8(ascii: "n"): simple = 0x0A
    case UInt8(ascii: "r"): simple = 0x0D
    case UInt8(ascii: "t"): simple = 0x09
    case UInt8(ascii: "u"):
      let first = try hexQuad()
      let scalar: Unicode.Scalar
      if (0xD800..<0xDC00).contains(first) {
        guard consume(UInt8(ascii: "\\")), consume(UInt8(ascii: "u")) else {
          throw failure("unpaired surrogate \\u\(String(first, radix: 16))")
        }
        let second = try hexQuad()
        guard (0xDC00..<0xE000).contains(second) else { throw failure("invalid low surrogate") }
        scalar = Unicode.Scalar(0x10000 + ((first - 0xD800) << 10) + (second - 0xDC00))!
      } else {
        guard let single = Unicode.Scalar(first) else { throw failure("unpaired surrogate") }
        scalar = single
      }
      UTF8.encode(scalar) { scratch.append($0) }
      return
    default: throw failure("invalid escape \\\(describe(byte))")
    }
    scratch.append(simple)
  }

  private mutating func hexQuad() throws(JSONError) -> UInt32 {
    var value: UInt32 = 0
    for _ in 0..<4 {
      guard position < bytes.count, let digit = hexValue(bytes[position]) else {
        throw failure("expected four hex digits after \\u")
      }
      value = value << 4 | digit
      position += 1
    }
    return value
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

  private func hexValue(_ byte: UInt8) -> UInt32? {
    switch byte {
    case UInt8(ascii: "0")...UInt8(ascii: "9"): UInt32(byte - UInt8(ascii: "0"))
    case UInt8(ascii: "a")...UInt8(ascii: "f"): UInt32(byte - UInt8(ascii: "a") + 10)
    case UInt8(ascii: "A")...UInt8(ascii: "F"): UInt32(byte - UInt8(ascii: "A") + 10)
    default: nil
    }
  }

  private func describe(_ byte: UInt8) -> String {
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
