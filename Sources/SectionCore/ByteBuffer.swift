/// Appending protocol text to byte buffers without building Strings on the way.
extension Array where Element == UInt8 {
  @inline(__always)
  mutating func append(_ byte: Character) {
    append(byte.asciiValue!)
  }

  /// Appends `value` in decimal, without allocating.
  mutating func appendDecimal(_ value: UInt64) {
    if value < 10 {
      append(UInt8(ascii: "0") + UInt8(value))
      return
    }
    var digits: (UInt64, UInt64, UInt64, UInt64) = (0, 0, 0, 0)  // 32 bytes: room for 20 digits
    var count = 0
    Swift.withUnsafeMutableBytes(of: &digits) { buffer in
      var rest = value
      while rest > 0 {
        buffer[31 - count] = UInt8(ascii: "0") + UInt8(rest % 10)
        rest /= 10
        count += 1
      }
      append(contentsOf: buffer[(32 - count)...])
    }
  }

  @inline(__always)
  mutating func appendDecimal(_ value: Int) {
    appendDecimal(UInt64(value))
  }

  /// Appends the UTF-8 of `text` as one copy: appending `text.utf8` goes element by element,
  /// which callgrind showed as a fifth of a TOGGLE's instructions.
  mutating func append(_ text: String) {
    var text = text
    text.withUTF8 { append(contentsOf: $0) }
  }
}

/// Compares bytes with a lower-case ASCII word, ignoring the case of the bytes.
func asciiCaseInsensitiveEquals(_ bytes: ArraySlice<UInt8>, _ lowercaseWord: [UInt8]) -> Bool {
  guard bytes.count == lowercaseWord.count else { return false }
  var word = lowercaseWord.startIndex
  for byte in bytes {
    let folded = (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(byte) ? byte | 0x20 : byte
    if folded != lowercaseWord[word] { return false }
    word += 1
  }
  return true
}
