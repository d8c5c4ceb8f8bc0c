/// Wall-clock times as RFC 3339 in UTC with milliseconds: `2026-12-03T20:41:07.123Z`.
public struct HistoryClock {
  private var second: UInt64 = .max
  /// `2026-12-03T20:41:07.` for `second`: the same for every change of a second.
  private var prefix: [UInt8] = []

  public init() {}

  /// `milliseconds` as `append` writes it, as a String: for `--log-changes`, whose entries
  /// name a group's time as its history lines do.
  public mutating func string(milliseconds: UInt64) -> String {
    var bytes: [UInt8] = []
    bytes.appendText { append(milliseconds: milliseconds, to: &$0) }
    return String(decoding: bytes, as: UTF8.self)
  }

  mutating func append(milliseconds: UInt64, to buffer: inout TextWriter) {
    let seconds = milliseconds / 1000
    if seconds != second {
      second = seconds
      prefix = Array(HistoryTime.text(seconds: seconds).utf8)
    }
    buffer.append(contentsOf: prefix)
    let fraction = milliseconds % 1000
    buffer.append(UInt8(ascii: "0") + UInt8(fraction / 100))
    buffer.append(UInt8(ascii: "0") + UInt8(fraction / 10 % 10))
    buffer.append(UInt8(ascii: "0") + UInt8(fraction % 10))
    buffer.append(UInt8(ascii: "Z"))
  }

  /// The seconds since the epoch of a time `append` wrote (`HistoryTime`).
  public static func seconds(of text: String) -> Int? { HistoryTime.seconds(of: text) }

  /// The milliseconds since the epoch of a time `append` wrote; nil for any other text.
  public static func milliseconds(of text: String) -> UInt64? { HistoryTime.milliseconds(of: text) }
}
