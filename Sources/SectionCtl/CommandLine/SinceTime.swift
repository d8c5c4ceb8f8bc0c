import Glibc
import Posix

/// `log --since TIME`, in the forms journalctl takes that a person types most: a local date
/// `2026-12-03` (its midnight), a local date and time `2026-12-03 20:41[:07]` (or with a `T`),
/// a time today `20:41[:07]`, `today`, `yesterday`, `now`, and a time before now, `-5min`,
/// `5min ago`, `1h ago`, `-2d` (units s, sec, m, min, h, hour, d, day, w, week, and their
/// plurals). Anything else is refused with this list, rather than guessed at.
enum SinceTime {
  static let forms =
    "YYYY-MM-DD, 'YYYY-MM-DD HH:MM[:SS]', HH:MM[:SS] (today), today, yesterday, now, "
    + "or a time ago: -5min, '1h ago', -2d"

  /// The seconds since the epoch that `text` names, `now` being the time it is; nil when it is none of `forms`.
  static func parse(_ text: String, now: Int) -> Int? {
    let trimmed = text.trimmingSpaces
    switch trimmed {
    case "now": return now
    case "today": return midnight(of: now)
    case "yesterday": return midnight(of: now).flatMap { midnight(of: $0 - 12 * 3600) }
    default: break
    }
    if let ago = secondsAgo(trimmed) { return now - ago }
    let parts = trimmed.split(whereSeparator: { $0 == " " || $0 == "T" }).map(String.init)
    switch parts.count {
    case 1 where parts[0].contains(":"):
      let today = ProcessInfo.localTime(now)
      guard let clock = clock(parts[0]) else { return nil }
      return local(today[0], today[1], today[2], clock.0, clock.1, clock.2)
    case 1:
      guard let date = date(parts[0]) else { return nil }
      return local(date.0, date.1, date.2, 0, 0, 0)
    case 2:
      guard let date = date(parts[0]), let clock = clock(parts[1]) else { return nil }
      return local(date.0, date.1, date.2, clock.0, clock.1, clock.2)
    default:
      return nil
    }
  }

  /// `-5min`, `5min ago`, `5 min ago`: the seconds; nil for anything else.
  private static func secondsAgo(_ text: String) -> Int? {
    var rest = Substring(text)
    if rest.hasPrefix("-") {
      rest = rest.dropFirst()
    } else if rest.hasSuffix(" ago") {
      rest = rest.dropLast(4)
    } else {
      return nil
    }
    rest = Substring(String(rest).trimmingSpaces)
    let digits = rest.prefix { $0.isASCII && $0.isNumber }
    let unit = String(rest.dropFirst(digits.count)).trimmingSpaces
    guard let amount = Int(digits), amount <= 100 * 365 * 86400 else { return nil }
    let seconds: Int
    switch unit {
    case "s", "sec", "secs", "second", "seconds": seconds = 1
    case "m", "min", "mins", "minute", "minutes": seconds = 60
    case "h", "hour", "hours": seconds = 3600
    case "d", "day", "days": seconds = 86400
    case "w", "week", "weeks": seconds = 7 * 86400
    default: return nil
    }
    return amount * seconds
  }

  /// `YYYY-MM-DD`.
  private static func date(_ text: String) -> (Int, Int, Int)? {
    let fields = text.split(separator: "-", omittingEmptySubsequences: false)
    guard fields.count == 3, fields[0].count == 4, fields[1].count == 2, fields[2].count == 2,
      let year = number(fields[0]), let month = number(fields[1]), let day = number(fields[2]),
      (1...12).contains(month), (1...31).contains(day)
    else { return nil }
    return (year, month, day)
  }

  /// `HH:MM` or `HH:MM:SS`.
  private static func clock(_ text: String) -> (Int, Int, Int)? {
    let fields = text.split(separator: ":", omittingEmptySubsequences: false)
    guard fields.count == 2 || fields.count == 3, fields.allSatisfy({ $0.count == 2 }),
      let hour = number(fields[0]), let minute = number(fields[1]), (0...23).contains(hour),
      (0...59).contains(minute)
    else { return nil }
    guard fields.count == 3 else { return (hour, minute, 0) }
    guard let second = number(fields[2]), (0...59).contains(second) else { return nil }
    return (hour, minute, second)
  }

  private static func number(_ digits: Substring) -> Int? {
    digits.allSatisfy { $0.isASCII && $0.isNumber } ? Int(digits) : nil
  }

  /// The local time's seconds since the epoch (mktime); nil for a day the month does not have.
  private static func local(_ year: Int, _ month: Int, _ day: Int, _ hour: Int, _ minute: Int, _ second: Int)
    -> Int?
  {
    var parts = tm()
    parts.tm_year = Int32(year - 1900)
    parts.tm_mon = Int32(month - 1)
    parts.tm_mday = Int32(day)
    parts.tm_hour = Int32(hour)
    parts.tm_min = Int32(minute)
    parts.tm_sec = Int32(second)
    parts.tm_isdst = -1
    let seconds = mktime(&parts)
    // mktime carries 31 February into March: such a day is refused instead.
    guard seconds != -1, parts.tm_mday == Int32(day), parts.tm_mon == Int32(month - 1) else { return nil }
    return Int(seconds)
  }

  private static func midnight(of seconds: Int) -> Int? {
    let day = ProcessInfo.localTime(seconds)
    return local(day[0], day[1], day[2], 0, 0, 0)
  }
}

extension String {
  fileprivate var trimmingSpaces: String {
    String(drop { $0 == " " }.reversed().drop { $0 == " " }.reversed())
  }
}
