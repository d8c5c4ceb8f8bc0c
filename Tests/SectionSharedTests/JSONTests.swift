import Testing

@testable import SectionShared

@Suite struct JSONParseTests {
  func parse(_ text: String) throws -> JSON { try JSON.parse(Array(text.utf8)) }

  func error(_ text: String) -> JSONError? { error(Array(text.utf8)) }

  func error(_ bytes: [UInt8]) -> JSONError? {
    do {
      _ = try JSON.parse(bytes)
      return nil
    } catch {
      return error
    }
  }

  @Test func scalars() throws {
    #expect(try parse("null") == .null)
    #expect(try parse("true") == .bool(true))
    #expect(try parse("false") == .bool(false))
    #expect(try parse("0") == .integer(0))
    #expect(try parse("-0") == .integer(0))
    #expect(try parse("42") == .integer(42))
    #expect(try parse("-17") == .integer(-17))
    #expect(try parse("9223372036854775807") == .integer(Int64.max))
    #expect(try parse("-9223372036854775808") == .integer(Int64.min))
    #expect(try parse("9223372036854775808") == .number(9_223_372_036_854_775_808.0))
    #expect(try parse("1.5") == .number(1.5))
    #expect(try parse("-2.25e2") == .number(-225))
    #expect(try parse("1E+2") == .number(100))
    #expect(try parse("5e-1") == .number(0.5))
    #expect(try parse("\"hi\"") == .string("hi"))
    #expect(try parse("\"\"") == .string(""))
  }

  @Test func whitespaceAroundTheDocumentAndABOM() throws {
    #expect(try parse(" \t\r\n[ 1 , 2 ]\n ") == .array([.integer(1), .integer(2)]))
    #expect(try JSON.parse([0xEF, 0xBB, 0xBF] + Array("true".utf8)) == .bool(true))
  }

  @Test func nestedValuesKeepMemberOrder() throws {
    let value = try parse(#"{"b": [1, {"c": null}], "a": {}, "z": []}"#)
    #expect(
      value
        == .object([
          ("b", .array([.integer(1), .object([("c", .null)])])),
          ("a", .object([])),
          ("z", .array([])),
        ]))
    #expect(value["a"] == .object([]))
    #expect(value["missing"] == nil)
    #expect(JSON.array([])["a"] == nil)
    // Order matters to equality.
    #expect(try parse(#"{"a":1,"b":2}"#) != parse(#"{"b":2,"a":1}"#))
    // Duplicate keys are kept as they came; the first wins for subscripts.
    let duplicated = try parse(#"{"a":1,"a":2}"#)
    #expect(duplicated == .object([("a", .integer(1)), ("a", .integer(2))]))
    #expect(duplicated["a"] == .integer(1))
  }

  @Test func escapes() throws {
    #expect(try parse(#""\"\\\/\b\f\n\r\t""#) == .string("\"\\/\u{8}\u{C}\n\r\t"))
    #expect(try parse(#""a\u0041\u00e9\u20AC""#) == .string("aAé€"))
    #expect(try parse(#""\u0000""#) == .string("\u{0}"))
    #expect(try parse("\"caf\u{E9} \u{1F600}\"") == .string("café 😀"))
  }

  @Test func surrogatePairs() throws {
    #expect(try parse(#""\ud83d\ude00""#) == .string("😀"))
    #expect(try parse(#""\uD834\uDD1E!""#) == .string("𝄞!"))
    #expect(try parse(#""\udbff\udfff""#) == .string("\u{10FFFF}"))
  }

  @Test func unpairedSurrogates() {
    #expect(error(#""\ud800""#) == JSONError(line: 1, column: 8, reason: "unpaired surrogate \\ud800"))
    #expect(error(#""\ud800x""#)?.reason == "unpaired surrogate \\ud800")
    #expect(error(#""\ud800\u0041""#) == JSONError(line: 1, column: 14, reason: "invalid low surrogate"))
    #expect(error(#""\ud800\ud800""#)?.reason == "invalid low surrogate")
    #expect(error(#""\udc00""#) == JSONError(line: 1, column: 8, reason: "unpaired surrogate"))
  }

  @Test func badEscapes() {
    #expect(error(#""\x""#) == JSONError(line: 1, column: 4, reason: "invalid escape \\'x'"))
    #expect(error(#""\u12""#) == JSONError(line: 1, column: 6, reason: "expected four hex digits after \\u"))
    #expect(error(#""\u12g4""#)?.reason == "expected four hex digits after \\u")
    #expect(error("\"\\") == JSONError(line: 1, column: 3, reason: "unterminated escape"))
  }

  @Test func stringErrors() {
    #expect(error("\"abc") == JSONError(line: 1, column: 5, reason: "unterminated string"))
    #expect(
      error("\"a\nb\"")
        == JSONError(line: 1, column: 3, reason: "control character 0xa in a string; escape it"))
    #expect(error("\"a\tb\"")?.reason == "control character 0x9 in a string; escape it")
    #expect(
      error([0x22, 0x61, 0xFF, 0x22]) == JSONError(line: 1, column: 4, reason: "invalid UTF-8 in a string"))
    #expect(error([0x22, 0xC3, 0x22])?.reason == "invalid UTF-8 in a string")
    // Invalid UTF-8 in the run before an escape is found too.
    #expect(error([0x22, 0xED, 0xA0, 0x80, 0x5C, 0x6E, 0x22])?.reason == "invalid UTF-8 in a string")
  }

  @Test func nestingLimit() throws {
    let deepest = String(repeating: "[", count: 64) + String(repeating: "]", count: 64)
    #expect(try parse(deepest) != .null)
    let tooDeep = String(repeating: "[", count: 65) + String(repeating: "]", count: 65)
    #expect(error(tooDeep) == JSONError(line: 1, column: 65, reason: "nested deeper than 64 levels"))
    let objects = String(repeating: "{\"a\":", count: 65) + "1" + String(repeating: "}", count: 65)
    #expect(error(objects)?.reason == "nested deeper than 64 levels")
    // Hostile input far past the limit fails cleanly instead of exhausting the stack.
    #expect(error(String(repeating: "[", count: 100_000))?.reason == "nested deeper than 64 levels")
  }

  @Test func trailingGarbage() {
    #expect(
      error("{} x") == JSONError(line: 1, column: 4, reason: "unexpected text after the end of the document"))
    #expect(error("1 2")?.reason == "unexpected text after the end of the document")
    #expect(
      error("truex") == JSONError(line: 1, column: 5, reason: "unexpected text after the end of the document")
    )
    #expect(error("[]]")?.reason == "unexpected text after the end of the document")
  }

  @Test func errorsCarryLineAndColumn() {
    #expect(error("") == JSONError(line: 1, column: 1, reason: "unexpected end of input, expected a value"))
    #expect(
      error("   ") == JSONError(line: 1, column: 4, reason: "unexpected end of input, expected a value"))
    #expect(
      error("{\n  \"a\": tru\n}") == JSONError(line: 2, column: 8, reason: "invalid literal, expected true"))
    #expect(
      error("[\n1,\n\n  ]")
        == JSONError(line: 4, column: 3, reason: "unexpected character ']', expected a value"))
    #expect(error("nul") == JSONError(line: 1, column: 1, reason: "invalid literal, expected null"))
    #expect(error("fals")?.reason == "invalid literal, expected false")
    #expect(error("@") == JSONError(line: 1, column: 1, reason: "unexpected character '@', expected a value"))
    #expect(
      error([0xFF]) == JSONError(line: 1, column: 1, reason: "unexpected character 0xff, expected a value"))
    #expect(
      error("{\"a\" 1}") == JSONError(line: 1, column: 6, reason: "expected ':' after member name \"a\""))
    #expect(
      error("{a:1}") == JSONError(line: 1, column: 2, reason: "expected a member name in double quotes"))
    #expect(
      error("{\"a\":1,}") == JSONError(line: 1, column: 8, reason: "expected a member name in double quotes"))
    #expect(
      error("{\"a\":1 \"b\":2}") == JSONError(line: 1, column: 8, reason: "expected ',' or '}' in an object"))
    #expect(error("[1 2]") == JSONError(line: 1, column: 4, reason: "expected ',' or ']' in an array"))
    #expect(error("[1,]")?.reason == "unexpected character ']', expected a value")
    #expect(error("[") == JSONError(line: 1, column: 2, reason: "unexpected end of input, expected a value"))
    #expect(error("{")?.reason == "expected a member name in double quotes")
    #expect(error("// x\n1")?.reason == "unexpected character '/', expected a value")
    #expect(
      JSONError(line: 3, column: 7, reason: "unterminated string").description
        == "line 3, column 7: unterminated string")
  }

  @Test func malformedNumbers() {
    #expect(error("-") == JSONError(line: 1, column: 2, reason: "expected a digit"))
    #expect(error("-x")?.reason == "expected a digit")
    #expect(error("1.") == JSONError(line: 1, column: 3, reason: "expected a digit after '.'"))
    #expect(error("1.e5")?.reason == "expected a digit after '.'")
    #expect(error("1e") == JSONError(line: 1, column: 3, reason: "expected a digit in the exponent"))
    #expect(error("1e+")?.reason == "expected a digit in the exponent")
    #expect(error(".5")?.reason == "unexpected character '.', expected a value")
    #expect(error("+1")?.reason == "unexpected character '+', expected a value")
  }

  /// RFC 8259: "leading zeros are not allowed". The parser says it is strict.
  @Test func leadingZerosAreRejected() {
    #expect(error("01") != nil)
    #expect(error("-01") != nil)
    #expect(error("[00]") != nil)
  }

  /// The parser has an "out of range" error for numbers no Double holds, but Double("1e999")
  /// is +infinity, not nil, so it never fires and infinity (serialized as null) gets through.
  @Test func outOfRangeNumbersAreRejected() {
    #expect(error("1e999") == JSONError(line: 1, column: 6, reason: "number 1e999 is out of range"))
    #expect(error("-1e999")?.reason == "number -1e999 is out of range")
  }

  @Test func kinds() {
    #expect(JSON.null.kind == "null")
    #expect(JSON.bool(true).kind == "a boolean")
    #expect(JSON.integer(1).kind == "a number")
    #expect(JSON.number(1.5).kind == "a number")
    #expect(JSON.string("").kind == "a string")
    #expect(JSON.array([]).kind == "an array")
    #expect(JSON.object([]).kind == "an object")
  }
}

@Suite struct JSONSerializeTests {
  @Test func compactOutputInOrder() {
    let value = JSON.object([
      ("b", .array([.bool(true), .null, .bool(false)])),
      ("a", .integer(-3)),
      ("n", .number(1.5)),
      ("e", .object([])),
    ])
    #expect(value.serialized() == #"{"b":[true,null,false],"a":-3,"n":1.5,"e":{}}"#)
    #expect(JSON.array([]).serialized() == "[]")
    #expect(JSON.integer(Int64.min).serialized() == "-9223372036854775808")
    #expect(JSON.number(.infinity).serialized() == "null")
    #expect(JSON.number(.nan).serialized() == "null")
  }

  @Test func stringEscapes() {
    #expect(JSON.string("a\"b\\c/").serialized() == #""a\"b\\c/""#)
    #expect(JSON.string("\n\r\t").serialized() == #""\n\r\t""#)
    #expect(JSON.string("\u{0}\u{1}\u{8}\u{C}\u{1F}").serialized() == #""\u0000\u0001\u0008\u000c\u001f""#)
    #expect(JSON.string("\u{7F}é😀").serialized() == "\"\u{7F}é😀\"")
    #expect(JSON.object([("k\"", .string(""))]).serialized() == #"{"k\"":""}"#)
  }

  @Test func roundTrip() throws {
    let value = JSON.object([
      ("text", .string("tab\there \"quoted\" \u{1} 😀 \\ end")),
      ("list", .array([.integer(0), .integer(Int64.max), .number(0.25), .null, .bool(false)])),
      ("nested", .object([("deeper", .array([.object([])]))])),
    ])
    #expect(try JSON.parse(Array(value.serialized().utf8)) == value)
  }
}
