/// Appending protocol text to byte buffers without building Strings on the way.
extension Array where Element == UInt8 {
  /// Appends a literal: one copy from the program's constant bytes, with no String bridging or
  /// reference counting (callgrind: about 95 instructions an append, against 150 for a String).
  @inline(__always)
  mutating func append(_ text: StaticString) {
    if text.utf8CodeUnitCount <= 3 {
      // `OK\n`, `-`, ` `: byte by byte is cheaper than a copy for so few (callgrind: 71
      // instructions for the copy of `OK\n`).
      for index in 0..<text.utf8CodeUnitCount { append(text.utf8Start[index]) }
    } else {
      append(contentsOf: UnsafeBufferPointer(start: text.utf8Start, count: text.utf8CodeUnitCount))
    }
  }

  /// Appends `value` in decimal, without allocating.
  mutating func appendDecimal(_ value: UInt64) {
    appendText { $0.appendDecimal(value) }
  }

  @inline(__always)
  mutating func appendDecimal(_ value: Int) {
    appendDecimal(UInt64(value))
  }

  /// Appends the UTF-8 of `text` as one copy: appending `text.utf8` goes element by element,
  /// which callgrind showed as a fifth of a TOGGLE's instructions.
  mutating func append(utf8 text: String) {
    var text = text
    text.withUTF8 { append(contentsOf: $0) }
  }

}

/// Compares bytes with a lower-case ASCII word, ignoring the case of the bytes.
func asciiCaseInsensitiveEquals(_ bytes: ArraySlice<UInt8>, _ lowercaseWord: StaticString) -> Bool {
  asciiFoldedEquals(
    bytes, UnsafeBufferPointer(start: lowercaseWord.utf8Start, count: lowercaseWord.utf8CodeUnitCount),
    upper: false)
}

/// Compares bytes with an upper-case ASCII word (a keyword of the grammar's table), ignoring the
/// case of the bytes.
func asciiCaseInsensitiveEquals(_ bytes: ArraySlice<UInt8>, uppercase word: String) -> Bool {
  var word = word
  return word.withUTF8 { asciiFoldedEquals(bytes, $0, upper: true) }
}

/// Whether `bytes`, their ASCII letters folded to the case of `word` (`upper` or lower), are `word`.
private func asciiFoldedEquals(_ bytes: ArraySlice<UInt8>, _ word: UnsafeBufferPointer<UInt8>, upper: Bool)
  -> Bool
{
  guard bytes.count == word.count else { return false }
  // Only "A"-"Z" (or "a"-"z") are under 26 once "A" (or "a") is subtracted, with wrap-around.
  let first = upper ? UInt8(ascii: "a") : UInt8(ascii: "A")
  return bytes.withUnsafeBufferPointer { bytes in
    for (index, byte) in bytes.enumerated() {
      let folded = byte &- first < 26 ? byte ^ 0x20 : byte
      if folded != word[index] { return false }
    }
    return true
  }
}
