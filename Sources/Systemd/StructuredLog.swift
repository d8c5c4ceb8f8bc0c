import CSystemd
import Glibc
import Posix

/// Structured entries for journald (sd_journal_sendv, the non-variadic form of
/// sd_journal_send): `FIELD=value` pairs, so that `journalctl FIELD=value` finds them.
public enum StructuredLog {
  /// Where journald takes entries: sd_journal_sendv writes to this socket, and drops an entry
  /// silently when it is not there.
  public static let socketPath = "/run/systemd/journal/socket"

  /// Whether journald's socket is there to take entries (`--log-changes` says at its start
  /// when it is not: its entries would go nowhere).
  public static var isAvailable: Bool {
    (try? FileSystem.status(socketPath, followingLinks: true))??.isSocket == true
  }

  /// Sends one entry; false when journald did not take it (not running, or full).
  @discardableResult
  public static func send(_ fields: [(name: String, value: String)]) -> Bool {
    var bytes: [UInt8] = []
    var ranges: [Range<Int>] = []
    for (name, value) in fields {
      let start = bytes.count
      bytes.append(contentsOf: name.utf8)
      bytes.append(UInt8(ascii: "="))
      bytes.append(contentsOf: value.utf8)
      ranges.append(start..<bytes.count)
    }
    return bytes.withUnsafeMutableBytes { buffer in
      let vectors = ranges.map { iovec(iov_base: buffer.baseAddress! + $0.lowerBound, iov_len: $0.count) }
      return vectors.withUnsafeBufferPointer { sd_journal_sendv($0.baseAddress, Int32($0.count)) } >= 0
    }
  }
}
