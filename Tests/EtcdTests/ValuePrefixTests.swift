import Testing

@testable import Etcd

/// A fleet host skips its own commits in its watch by their text (`ValuePrefix`): another
/// host's entry that looks alike, or a line that holds one besides, must still be parsed.
@Suite struct ValuePrefixTests {
  /// A watch line as etcd 3.4's gateway writes it, one event per value.
  private func line(_ values: [String], revision: Int = 7) -> ArraySlice<UInt8> {
    let events = values.enumerated().map { index, value in
      let key = Base64.encode(Array("/p/log/\(revision + index)".utf8))
      return #"{"kv":{"key":"\#(key)","create_revision":"\#(revision)","mod_revision":"\#(revision)","#
        + #""version":"1","value":"\#(Base64.encode(Array(value.utf8)))"}}"#
    }
    let header = #"{"cluster_id":"1","member_id":"2","revision":"\#(revision)","raft_term":"3"}"#
    return Array(#"{"result":{"header":\#(header),"events":[\#(events.joined(separator: ","))]}}"#.utf8)[...]
  }

  private let own = "sectiond-fleet 1 7 h0 k3x9.1\nby 2026-12-05T02:00:00.000Z socket 0 42 a\nopen 7 1\n"

  private func prefix(_ entry: String) -> ValuePrefix {
    let bytes = Array(entry.utf8)
    return ValuePrefix(of: bytes, count: bytes.firstIndex(of: 0x0A)! + 1)
  }

  @Test func knowsTheOwnEntry() {
    // Its revision is the event's mod revision: the revision the commit's txn made.
    #expect(prefix(own).revision(in: line([own], revision: 7_000_000_001)) == 7_000_000_001)
    // A header whose length is a multiple of three, and a value no longer than the header.
    let short = "sectiond-fleet 1 7 h0 k3x9.10\n"
    #expect(prefix(short).revision(in: line([short])) == 7)
  }

  @Test func aLineWithoutOneReadableRevisionIsNotOurs() {
    let ours = line([own])
    let text = String(decoding: ours, as: UTF8.self)
    for broken in [
      text.replacingOccurrences(#""mod_revision":"7""#, #""mod_revision":"7x""#),
      text.replacingOccurrences(#""mod_revision":"7""#, #""mod_revision":"99999999999999999999""#),
      text.replacingOccurrences(#""mod_revision":"7","#, ""),
      text.replacingOccurrences(#""mod_revision":"7""#, #""mod_revision":"7","mod_revision":"8""#),
    ] {
      #expect(prefix(own).revision(in: Array(broken.utf8)[...]) == nil, "\(broken)")
    }
  }

  @Test func anotherHostsEntryThatLooksAlikeIsNotSkipped() {
    let mark = prefix(own)
    // The same revision, commit id and changes through another host; the same host's other
    // commit whose id begins with this one's; another revision.
    for other in [
      own.replacingOccurrences("h0 ", "h1 "), own.replacingOccurrences("k3x9.1\n", "k3x9.12\n"),
      own.replacingOccurrences(" 7 h0", " 8 h0"),
    ] {
      #expect(mark.revision(in: line([other])) == nil, "\(other)")
    }
    // Ours beside another's in one update: the other must be read.
    #expect(mark.revision(in: line([own, own.replacingOccurrences("h0 ", "h1 ")])) == nil)
    #expect(mark.revision(in: line([own.replacingOccurrences("h0 ", "h1 "), own])) == nil)
    // An update without a value (a progress notification, a deletion).
    #expect(mark.revision(in: line([])) == nil)
  }
}

extension String {
  fileprivate func replacingOccurrences(_ target: String, _ replacement: String) -> String {
    var result = ""
    var rest = self[...]
    while let range = rest.firstRange(of: target) {
      result += rest[..<range.lowerBound] + replacement
      rest = rest[range.upperBound...]
    }
    return result + rest
  }
}
