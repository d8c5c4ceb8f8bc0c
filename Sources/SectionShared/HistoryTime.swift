/// The time of a change in the history record (`HISTORY`'s lines, the state file's journal):
/// RFC 3339 in UTC with milliseconds, `2026-12-03T20:41:07.123Z`. The daemon writes it
/// (`HistoryClock`) and sectionctl reads it (`log --since`, the times `log` shows); public so that
/// a program reads `HistoryEntry.time` by the same rule.
public enum HistoryTime {
  /// The seconds since the epoch of a time the history wrote (`2026-12-03T20:41:07.123Z`); nil
  /// for any other text. Days from the civil date as Howard Hinnant's days_from_civil.
  public static func seconds(of text: String) -> Int? {
    var text = text
    return text.withUTF8 { parse($0)?.seconds }
  }

  /// The milliseconds since the epoch of a time the history wrote; nil for any other text.
  public static func milliseconds(of text: String) -> UInt64? {
    var text = text
    return text.withUTF8 { digits in
      guard let (seconds, milliseconds) = parse(digits), seconds >= 0, let milliseconds else { return nil }
      return UInt64(seconds) * 1000 + milliseconds
    }
  }

  /// The seconds since the epoch of `YYYY-MM-DDTHH:MM:SS.mmmZ`, and its milliseconds when they
  /// are digits; read in place (a fleet host reads one for every change another host makes, and
  /// copying the text into arrays twice was 1,500 instructions of each).
  private static func parse(_ digits: UnsafeBufferPointer<UInt8>) -> (seconds: Int, milliseconds: UInt64?)? {
    guard digits.count == 24, digits[4] == UInt8(ascii: "-"), digits[10] == UInt8(ascii: "T"),
      digits[23] == UInt8(ascii: "Z")
    else { return nil }
    func number(_ range: Range<Int>) -> Int? {
      var value = 0
      for digit in digits[range] {
        guard (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(digit) else { return nil }
        value = value * 10 + Int(digit - UInt8(ascii: "0"))
      }
      return value
    }
    guard let year = number(0..<4), let month = number(5..<7), let day = number(8..<10),
      let hour = number(11..<13), let minute = number(14..<16), let second = number(17..<19),
      (1...12).contains(month)
    else { return nil }
    let shiftedYear = month <= 2 ? year - 1 : year
    let era = shiftedYear / 400
    let yearOfEra = shiftedYear - era * 400
    let dayOfYear = (153 * (month > 2 ? month - 3 : month + 9) + 2) / 5 + day - 1
    let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
    let days = era * 146_097 + dayOfEra - 719_468
    return (days * 86_400 + hour * 3600 + minute * 60 + second, number(20..<23).map(UInt64.init))
  }

  /// `YYYY-MM-DDTHH:MM:SS.` of the seconds since the epoch: the civil date of the day (Howard
  /// Hinnant's days_from_civil, inverted), then the time of day.
  package static func text(seconds: UInt64) -> String {
    let days = Int64(seconds / 86_400)
    let time = Int(seconds % 86_400)
    let shifted = days + 719_468
    let era = shifted / 146_097
    let dayOfEra = shifted - era * 146_097
    let yearOfEra = (dayOfEra - dayOfEra / 1460 + dayOfEra / 36_524 - dayOfEra / 146_096) / 365
    let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
    let monthIndex = (5 * dayOfYear + 2) / 153
    let day = dayOfYear - (153 * monthIndex + 2) / 5 + 1
    let month = monthIndex < 10 ? monthIndex + 3 : monthIndex - 9
    let year = yearOfEra + era * 400 + (month <= 2 ? 1 : 0)
    func two(_ value: Int64) -> String { value < 10 ? "0\(value)" : "\(value)" }
    let (hour, minute, second) = (Int64(time / 3600), Int64(time / 60 % 60), Int64(time % 60))
    return "\(year)-\(two(month))-\(two(day))T\(two(hour)):\(two(minute)):\(two(second))."
  }
}
