/// CRC-32C (Castagnoli), the checksum LevelDB's log records and ext4's metadata carry: a torn
/// or half-written journal group fails it, so it is dropped whole instead of read as something
/// else.
///
/// Slicing-by-8 (Intel's, as zlib and the kernel's software CRCs): eight tables, eight bytes a
/// step. Every saved group is checked, and each change's history line made a group ten times
/// the bytes: byte at a time, the checksum was a sixth of a TOGGLE's CPU at 16 in flight (perf).
public enum CRC32C {
  /// `tables[k][b]`: the CRC of byte `b` followed by `k` zero bytes.
  private static let tables: [UInt32] = {
    var tables = [UInt32](repeating: 0, count: 8 * 256)
    for index in 0..<256 {
      var value = UInt32(index)
      for _ in 0..<8 { value = value & 1 == 1 ? (value >> 1) ^ 0x82F6_3B78 : value >> 1 }
      tables[index] = value
    }
    for slice in 1..<8 {
      for index in 0..<256 {
        let previous = tables[(slice - 1) * 256 + index]
        tables[slice * 256 + index] = tables[Int(previous & 0xFF)] ^ (previous >> 8)
      }
    }
    return tables
  }()

  /// The checksum of `bytes` (standard: initial and final value inverted).
  public static func checksum(_ bytes: some Collection<UInt8>) -> UInt32 {
    if let crc = bytes.withContiguousStorageIfAvailable(checksum) { return crc }
    return Array(bytes).withUnsafeBufferPointer(checksum)
  }

  private static func checksum(_ bytes: UnsafeBufferPointer<UInt8>) -> UInt32 {
    var crc: UInt32 = 0xFFFF_FFFF
    tables.withUnsafeBufferPointer { table in
      var position = 0
      let count = bytes.count
      guard let base = bytes.baseAddress else { return }
      while count - position >= 8 {
        let word = UInt64(littleEndian: UnsafeRawPointer(base + position).loadUnaligned(as: UInt64.self))
        let low = UInt32(truncatingIfNeeded: word) ^ crc
        let high = UInt32(truncatingIfNeeded: word >> 32)
        crc =
          table[7 * 256 + Int(low & 0xFF)] ^ table[6 * 256 + Int((low >> 8) & 0xFF)]
          ^ table[5 * 256 + Int((low >> 16) & 0xFF)] ^ table[4 * 256 + Int(low >> 24)]
          ^ table[3 * 256 + Int(high & 0xFF)] ^ table[2 * 256 + Int((high >> 8) & 0xFF)]
          ^ table[256 + Int((high >> 16) & 0xFF)] ^ table[Int(high >> 24)]
        position += 8
      }
      while position < count {
        crc = table[Int(UInt8(truncatingIfNeeded: crc) ^ base[position])] ^ (crc >> 8)
        position += 1
      }
    }
    return ~crc
  }
}
