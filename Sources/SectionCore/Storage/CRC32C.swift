/// CRC-32C (Castagnoli), the checksum LevelDB's log records and ext4's metadata carry: a torn
/// or half-written journal group fails it, so it is dropped whole instead of read as something
/// else. Table-driven, a byte at a time: journal groups are small, and the whole state file is
/// never checked with it.
public enum CRC32C {
  private static let table: [UInt32] = (0..<256).map { index in
    var value = UInt32(index)
    for _ in 0..<8 { value = value & 1 == 1 ? (value >> 1) ^ 0x82F6_3B78 : value >> 1 }
    return value
  }

  /// The checksum of `bytes` (standard: initial and final value inverted).
  public static func checksum(_ bytes: some Collection<UInt8>) -> UInt32 {
    var crc: UInt32 = 0xFFFF_FFFF
    table.withUnsafeBufferPointer { table in
      for byte in bytes { crc = table[Int(UInt8(truncatingIfNeeded: crc) ^ byte)] ^ (crc >> 8) }
    }
    return ~crc
  }
}
