/// RFC 4648 base64 with padding: the etcd gateway's JSON carries every key and value this way.
/// Written here because the daemon does not load Foundation (and with it ICU).
public enum Base64 {
  private static let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/".utf8)

  /// The value of each byte in the alphabet, 0xFF for a byte outside it.
  private static let values: [UInt8] = {
    var values = [UInt8](repeating: 0xFF, count: 256)
    for (index, byte) in alphabet.enumerated() { values[Int(byte)] = UInt8(index) }
    return values
  }()

  public static func encode(_ bytes: some Collection<UInt8>) -> String {
    var output: [UInt8] = []
    encode(bytes, into: &output)
    return String(decoding: output, as: UTF8.self)
  }

  /// Appends the encoding of `bytes` to `output` (a request's body being written), through
  /// pointers: a fleet host encodes every commit's keys and entry, and an iterator and
  /// `append` byte by byte took about 6,000 instructions for a TOGGLE's (docs/PERFORMANCE.md).
  public static func encode(_ bytes: some Collection<UInt8>, into output: inout [UInt8]) {
    let start = output.count
    output.append(contentsOf: repeatElement(0, count: (bytes.count + 2) / 3 * 4))
    output.withUnsafeMutableBufferPointer { buffer in
      let written = UnsafeMutableBufferPointer(rebasing: buffer[start...])
      if bytes.withContiguousStorageIfAvailable({ encode($0, into: written) }) == nil {
        Array(bytes).withUnsafeBufferPointer { encode($0, into: written) }
      }
    }
  }

  /// Writes the encoding of `input` into `output`, which has exactly its length.
  private static func encode(
    _ input: UnsafeBufferPointer<UInt8>, into output: UnsafeMutableBufferPointer<UInt8>
  ) {
    alphabet.withUnsafeBufferPointer { table in
      var from = 0
      var to = 0
      while input.count - from >= 3 {
        let group = UInt32(input[from]) << 16 | UInt32(input[from + 1]) << 8 | UInt32(input[from + 2])
        output[to] = table[Int(group >> 18)]
        output[to + 1] = table[Int(group >> 12 & 0x3F)]
        output[to + 2] = table[Int(group >> 6 & 0x3F)]
        output[to + 3] = table[Int(group & 0x3F)]
        from += 3
        to += 4
      }
      guard from < input.count else { return }
      let second = from + 1 < input.count
      let group = UInt32(input[from]) << 16 | (second ? UInt32(input[from + 1]) << 8 : 0)
      output[to] = table[Int(group >> 18)]
      output[to + 1] = table[Int(group >> 12 & 0x3F)]
      output[to + 2] = second ? table[Int(group >> 6 & 0x3F)] : UInt8(ascii: "=")
      output[to + 3] = UInt8(ascii: "=")
    }
  }

  /// The bytes `text` encodes; nil when it is not base64 (a length not a multiple of four,
  /// a byte outside the alphabet, padding anywhere but at the end).
  public static func decode(_ text: String) -> [UInt8]? {
    var text = text
    return text.withUTF8 { decode($0) }
  }

  /// `decode` over the text's bytes, through pointers: every host decodes every change's
  /// entry from its watch, and indexing arrays byte by byte took 10,000 instructions for a
  /// TOGGLE's entry of 130 bytes (docs/PERFORMANCE.md, "Fleet").
  static func decode(_ input: UnsafeBufferPointer<UInt8>) -> [UInt8]? {
    guard input.count % 4 == 0 else { return nil }
    var padding = 0
    while padding < min(4, input.count) && input[input.count - 1 - padding] == UInt8(ascii: "=") {
      padding += 1
    }
    guard padding <= 2 else { return nil }
    let length = input.count / 4 * 3 - padding
    var valid = true
    let output = values.withUnsafeBufferPointer { table in
      [UInt8](unsafeUninitializedCapacity: length) { buffer, initialized in
        var at = 0
        var index = 0
        while index < input.count {
          // The padding's places (in the last group only) count as zero bits.
          let real = index + 4 == input.count ? 4 - padding : 4
          var group: UInt32 = 0
          var bad: UInt8 = 0
          for offset in 0..<4 {
            let value = offset < real ? table[Int(input[index + offset])] : 0
            bad |= value
            group = group << 6 | UInt32(value & 0x3F)
          }
          // Only 0xFF (not in the alphabet) has bits above the six a value takes.
          guard bad & 0xC0 == 0 else {
            valid = false
            break
          }
          let count = real - 1
          if count > 0 { buffer[at] = UInt8(group >> 16 & 0xFF) }
          if count > 1 { buffer[at + 1] = UInt8(group >> 8 & 0xFF) }
          if count > 2 { buffer[at + 2] = UInt8(group & 0xFF) }
          at += count
          index += 4
        }
        initialized = valid ? at : 0
      }
    }
    return valid ? output : nil
  }
}
