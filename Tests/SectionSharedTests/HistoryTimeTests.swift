import Testing

@testable import SectionShared

/// The history's times, which the daemon writes and sectionctl reads back (`log --since`):
/// the seconds and milliseconds of a time as Python's datetime gives them, and the text of a
/// time back again.
@Suite struct HistoryTimeTests {
  /// Each time with its seconds since the epoch, from Python's `datetime.timestamp()`: a time
  /// of day, a leap day, the second before the epoch, a century that is not a leap year.
  static let times: [(String, Int)] = [
    ("1970-01-01T00:00:00.000Z", 0), ("2026-12-03T20:41:07.123Z", 1_796_330_467),
    ("2000-02-29T23:59:59.999Z", 951_868_799), ("1969-12-31T23:59:59.000Z", -1),
    ("2100-03-01T00:00:00.000Z", 4_107_542_400),
  ]

  @Test(arguments: times)
  func secondsOfATime(_ text: String, _ seconds: Int) {
    #expect(HistoryTime.seconds(of: text) == seconds)
  }

  @Test(arguments: times.filter { $0.1 >= 0 })
  func aTimeReadsBackAsWritten(_ text: String, _ seconds: Int) {
    #expect(HistoryTime.text(seconds: UInt64(seconds)) + text.suffix(4) == text)
  }

  @Test func millisecondsKeepTheFraction() {
    #expect(HistoryTime.milliseconds(of: "2026-12-03T20:41:07.123Z") == 1_796_330_467_123)
    #expect(HistoryTime.milliseconds(of: "1970-01-01T00:00:00.007Z") == 7)
    #expect(HistoryTime.milliseconds(of: "1969-12-31T23:59:59.000Z") == nil)
    #expect(HistoryTime.milliseconds(of: "2026-12-03T20:41:07.1x3Z") == nil)
  }

  @Test(arguments: [
    "", "2026-12-03", "2026-12-03T20:41:07Z", "2026-12-03T20:41:07.123+00:00",
    "2026-13-03T20:41:07.123Z", "2026-00-03T20:41:07.123Z", "20x6-12-03T20:41:07.123Z",
    "2026/12/03T20:41:07.123Z", "2026-12-03 20:41:07.123Z", "2026-12-03T20:41:07.123z",
  ])
  func otherTextIsNoTime(_ text: String) {
    #expect(HistoryTime.seconds(of: text) == nil)
  }
}
