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

  /// Appends the encoding of `bytes` to `output` (a request's body being written).
  public static func encode(_ bytes: some Collection<UInt8>, into output: inout [UInt8]) {
    output.reserveCapacity(output.count + (bytes.count + 2) / 3 * 4)
    var iterator = bytes.makeIterator()
    while let first = iterator.next() {
      let second = iterator.next()
      let third = iterator.next()
      let group = UInt32(first) << 16 | UInt32(second ?? 0) << 8 | UInt32(third ?? 0)
      output.append(alphabet[Int(group >> 18 & 0x3F)])
      output.append(alphabet[Int(group >> 12 & 0x3F)])
      output.append(second == nil ? UInt8(ascii: "=") : alphabet[Int(group >> 6 & 0x3F)])
      output.append(third == nil ? UInt8(ascii: "=") : alphabet[Int(group & 0x3F)])
    }
  }

  /// The bytes `text` encodes; nil when it is not base64 (a length not a multiple of four,
  /// a byte outside the alphabet, padding anywhere but at the end).
  public static func decode(_ text: String) -> [UInt8]? {
    let input = Array(text.utf8)
    guard input.count % 4 == 0 else { return nil }
    var output: [UInt8] = []
    output.reserveCapacity(input.count / 4 * 3)
    var index = 0
    while index < input.count {
      let isLast = index + 4 == input.count
      let padding = isLast ? input[index...].reversed().prefix { $0 == UInt8(ascii: "=") }.count : 0
      guard padding <= 2 else { return nil }
      var group: UInt32 = 0
      for offset in 0..<4 {
        let byte = input[index + offset]
        let value = offset >= 4 - padding ? 0 : values[Int(byte)]
        guard value != 0xFF else { return nil }
        group = group << 6 | UInt32(value)
      }
      output.append(UInt8(group >> 16 & 0xFF))
      if padding < 2 { output.append(UInt8(group >> 8 & 0xFF)) }
      if padding < 1 { output.append(UInt8(group & 0xFF)) }
      index += 4
    }
    return output
  }
}
