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

  /// Appends `value` in decimal, without allocating: the digits are written backwards into a
  /// stack buffer, then appended a byte at a time, which for a handful of digits costs less
  /// than `append(contentsOf:)` (callgrind: a TOGGLE renders six numbers; 5,412 -> 5,252
  /// instructions).
  mutating func appendDecimal(_ value: UInt64) {
    withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 20) { digits in
      var start = digits.count
      var rest = value
      repeat {
        start -= 1
        digits[start] = UInt8(ascii: "0") &+ UInt8(truncatingIfNeeded: rest % 10)
        rest /= 10
      } while rest > 0
      for digit in digits[start...] { append(digit) }
    }
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
  guard bytes.count == lowercaseWord.utf8CodeUnitCount else { return false }
  var word = lowercaseWord.utf8Start
  for byte in bytes {
    let folded = (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(byte) ? byte | 0x20 : byte
    if folded != word.pointee { return false }
    word += 1
  }
  return true
}
