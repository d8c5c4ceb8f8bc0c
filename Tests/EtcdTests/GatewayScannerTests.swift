import SectionShared
import Testing

@testable import Etcd

/// Each text in `texts` changed in one byte (replaced by one that matters to JSON, or left
/// out), handed to `check`: how many it took (returned true for).
private func oneByteAway(from texts: [String], _ check: ([UInt8]) -> Bool) -> Int {
  let replacements = Array(#""\,:{}[]0-A= tr"#.utf8)
  var taken = 0
  for original in texts {
    let bytes = Array(original.utf8)
    for index in bytes.indices {
      var variants = replacements.filter { $0 != bytes[index] }.map { byte in
        var changed = bytes
        changed[index] = byte
        return changed
      }
      variants.append(Array(bytes[..<index] + bytes[(index + 1)...]))
      for variant in variants where check(variant) { taken += 1 }
    }
  }
  return taken
}

/// A watch line's events are read straight from its bytes (`WatchLine`) when the line has the
/// gateway's usual shape; the full parser reads every other. The fast reader must give what
/// the full parser gives, or nothing.
@Suite struct WatchLineTests {
  private static let header =
    #"{"header":{"cluster_id":"15118495548433857066","member_id":"13668033151171901709","revision":"5","raft_term":"2"}"#

  /// Event lines as etcd 3.4.23's gateway wrote them (`curl -N …/v3/watch`): a put, a put of
  /// an empty value (no `value`), two puts of one txn, a delete, a put with a lease.
  static let eventLines = [
    #"{"result":\#(header),"events":[{"kv":{"key":"L3AvYQ==","create_revision":"2","mod_revision":"2","version":"1","value":"aGVsbG8="}}]}}"#,
    #"{"result":\#(header),"events":[{"kv":{"key":"L3AvYQ==","create_revision":"2","mod_revision":"3","version":"2"}}]}}"#,
    #"{"result":\#(header),"events":[{"kv":{"key":"L3AvYg==","create_revision":"4","mod_revision":"4","version":"1","value":"eA=="}},{"kv":{"key":"L3AvYw==","create_revision":"4","mod_revision":"4","version":"1","value":"eQ=="}}]}}"#,
    #"{"result":\#(header),"events":[{"type":"DELETE","kv":{"key":"L3AvYQ==","mod_revision":"5"}}]}}"#,
    #"{"result":\#(header),"events":[{"kv":{"key":"L3AvZA==","create_revision":"6","mod_revision":"6","version":"1","value":"eA==","lease":"4111120448822396938"}}]}}"#,
  ]

  /// Lines of the same gateway that are not events alone: the reader leaves them to the parser.
  static let otherLines = [
    #"{"result":\#(header),"created":true}}"#,
    #"{"result":{"header":{"cluster_id":"1","member_id":"2","raft_term":"2"},"canceled":true,"compact_revision":"4"}}"#,
    #"{"result":\#(header),"events":[{"kv":{"key":"L3AvYQ==","create_revision":"2","mod_revision":"3","version":"2"},"prev_kv":{"key":"L3AvYQ==","create_revision":"2","mod_revision":"2","version":"1","value":"aGVsbG8="}}]}}"#,
    #"{"result":\#(header)}}"#,
    #"{"error":{"grpc_code":14,"http_code":503,"message":"etcdserver: no leader","http_status":"Service Unavailable"}}"#,
  ]

  private func full(_ line: String) -> WatchUpdate {
    EtcdClient.parsedUpdate(Array(line.utf8)[...], member: "m")
  }
  private func fast(_ line: String) -> WatchUpdate? { WatchLine.events(in: Array(line.utf8)[...]) }

  @Test func readsTheGatewaysEventLinesAsTheParserDoes() throws {
    for line in Self.eventLines {
      let update = try #require(fast(line), "\(line)")
      #expect(update == full(line), "\(line)")
      guard case .events(let events, revision: 5) = update else {
        Issue.record("\(update)")
        continue
      }
      #expect(!events.isEmpty)
    }
    let two = try #require(fast(Self.eventLines[2]))
    #expect(
      two
        == .events(
          [
            KeyEvent(
              kind: .put,
              kv: KeyValue(
                key: Array("/p/b".utf8), value: Array("x".utf8), createRevision: 4, modRevision: 4,
                version: 1,
                lease: 0)),
            KeyEvent(
              kind: .put,
              kv: KeyValue(
                key: Array("/p/c".utf8), value: Array("y".utf8), createRevision: 4, modRevision: 4,
                version: 1,
                lease: 0)),
          ], revision: 5))
    #expect(
      fast(Self.eventLines[3])
        == .events(
          [
            KeyEvent(
              kind: .delete,
              kv: KeyValue(
                key: Array("/p/a".utf8), value: [], createRevision: 0, modRevision: 5, version: 0, lease: 0))
          ], revision: 5))
  }

  /// A group's entry of hundreds of KB in one value (a fleet's big commit) reads the same.
  @Test func readsALongValue() throws {
    let value = (0..<300_000).map { UInt8(truncatingIfNeeded: $0 &* 7) }
    let line = Self.eventLines[0].replacing(#""aGVsbG8=""#, with: "\"\(Base64.encode(value))\"")
    let update = try #require(fast(line))
    #expect(update == full(line))
    guard case .events(let events, _) = update else { return }
    #expect(events.first?.kv.value == value)
  }

  @Test func leavesEveryOtherLineToTheParser() {
    for line in Self.otherLines { #expect(fast(line) == nil, "\(line)") }
    // What the full parser makes of them is what a watch delivers.
    #expect(EtcdClient.watchUpdate(Array(Self.otherLines[0].utf8)[...], member: "m") == .created(revision: 5))
    #expect(
      EtcdClient.watchUpdate(Array(Self.otherLines[1].utf8)[...], member: "m")
        == .compacted(compactRevision: 4))
  }

  /// Lines the reader must not take, each a small change of a line it does take: JSON it does
  /// not read as the parser would (escapes, white space, numbers as numbers), members it does
  /// not know or that come twice, numbers out of range, bytes after the end.
  @Test func refusesWhatItDoesNotKnow() {
    let put = Self.eventLines[0]
    for (target, replacement) in [
      (#""key":"L3AvYQ==""#, #""key":"\u004C3AvYQ==""#),  // an escape the parser decodes
      (#""value":"aGVsbG8=""#, #""value":"aGVs\/bG8=""#),
      (#""value":"aGVsbG8=""#, #""value":"aGVsbG8\"""#),
      (#""events":["#, #""events": ["#),  // white space
      (#""version":"1""#, #""version":1"#),  // a number, not a string
      (#""version":"1""#, #""version":"+1""#),
      (#""version":"1""#, #""version":"""#),
      (#""version":"1""#, #""version":"9223372036854775808""#),  // past Int64
      (#""cluster_id":"15118495548433857066""#, #""cluster_id":"18446744073709551616""#),  // past UInt64
      (#""cluster_id":"15118495548433857066""#, #""cluster_id":"-1""#),
      (#""version":"1""#, #""version":"1","version":"2""#),  // twice
      (#""kv":{"#, #""type":"PUT","type":"DELETE","kv":{"#),
      (#""kv":{"#, #""type":"PATCH","kv":{"#),  // a type etcd does not have
      (#""raft_term":"2""#, #""raft_term":"2","watch_id":"1""#),  // a member it does not know
      (#""revision":"5","raft_term""#, #""fragment":true,"revision":"5","raft_term""#),
      (#"]}}"#, #"]}},"#),  // bytes after the end
      (#"]}}"#, #"]}"#),  // cut short
    ] {
      let line = put.replacing(target, with: replacement)
      #expect(line != put, "\(target) not in the line")
      #expect(fast(line) == nil, "\(line)")
    }
    // Within range both ways, and minus signs where the parser takes them.
    let edges = put.replacing(#""version":"1""#, with: #""version":"-9223372036854775808""#)
      .replacing(#""create_revision":"2""#, with: #""create_revision":"9223372036854775807""#)
    #expect(fast(edges) != nil && fast(edges) == full(edges))
  }

  /// Every line one byte away from the gateway's (each byte replaced by one that matters to
  /// JSON, or left out): the reader gives the parser's answer or none.
  @Test func agreesWithTheParserOnLinesOneByteAway() {
    let taken = oneByteAway(from: Self.eventLines) { variant in
      guard let update = WatchLine.events(in: variant[...]) else { return false }
      #expect(
        update == EtcdClient.parsedUpdate(variant[...], member: "m"),
        "\(String(decoding: variant, as: UTF8.self))")
      return true
    }
    // Some changed lines are still events (another digit, another base64 letter).
    #expect(taken > 0)
  }
}

/// A txn's answer of puts is read straight from its bytes (`TxnAnswer`); any other by the
/// parser. Above all a failed compare must never read as a success.
@Suite struct TxnAnswerTests {
  private static let header =
    #"{"cluster_id":"15118495548433857066","member_id":"13668033151171901709","revision":"4","raft_term":"2"}"#

  /// As etcd 3.4.23's gateway wrote them: two puts that ran; a failed compare without a failure
  /// branch; a failed compare whose failure branch put.
  static let putAnswers = [
    #"{"header":\#(header),"succeeded":true,"responses":[{"response_put":{"header":{"revision":"4"}}},{"response_put":{"header":{"revision":"4"}}}]}"#,
    #"{"header":\#(header)}"#,
    #"{"header":\#(header),"responses":[{"response_put":{"header":{"revision":"4"}}}]}"#,
  ]

  private func full(_ text: String) -> TxnResponse? {
    try? TxnResponse(JSON.parse(Array(text.utf8)))
  }
  private func fast(_ text: String) -> TxnResponse? { TxnAnswer.response(in: Array(text.utf8)[...]) }

  @Test func readsPutAnswersAsTheParserDoes() throws {
    let header = ResponseHeader(
      clusterID: 15_118_495_548_433_857_066, memberID: 13_668_033_151_171_901_709, revision: 4, raftTerm: 2)
    #expect(
      fast(Self.putAnswers[0]) == TxnResponse(header: header, succeeded: true, responses: [.put, .put]))
    #expect(fast(Self.putAnswers[1]) == TxnResponse(header: header, succeeded: false, responses: []))
    #expect(fast(Self.putAnswers[2]) == TxnResponse(header: header, succeeded: false, responses: [.put]))
    for answer in Self.putAnswers { #expect(fast(answer) == full(answer), "\(answer)") }
  }

  @Test func leavesEveryOtherAnswerToTheParser() {
    let range =
      #"{"header":\#(Self.header),"responses":[{"response_range":{"header":{"revision":"4"},"kvs":[{"key":"aw==","create_revision":"2","mod_revision":"4","version":"3","value":"eA=="}],"count":"1"}}]}"#
    let delete =
      #"{"header":\#(Self.header),"succeeded":true,"responses":[{"response_delete_range":{"header":{"revision":"5"},"deleted":"1"}}]}"#
    let put = Self.putAnswers[0]
    for answer in [
      range, delete, put.replacing(#""succeeded":true"#, with: #""succeeded":false"#),
      put.replacing(#""succeeded":true"#, with: #""succeeded":"true""#),
      put.replacing(#""succeeded":true,"#, with: #""succeeded":true,"succeeded":true,"#),
      put.replacing(#""raft_term":"2""#, with: #""raft_term":"2","extra":1"#), put + " ", put + ",",
      #"{"error":"etcdserver: no leader","code":14,"message":"etcdserver: no leader"}"#,
    ] {
      #expect(fast(answer) == nil, "\(answer)")
    }
    #expect(full(range)?.responses.count == 1)
  }

  @Test func agreesWithTheParserOnAnswersOneByteAway() {
    var successes = 0
    let taken = oneByteAway(from: Self.putAnswers) { variant in
      guard let response = TxnAnswer.response(in: variant[...]) else { return false }
      let parsed = try? TxnResponse(JSON.parse(variant))
      #expect(response == parsed, "\(String(decoding: variant, as: UTF8.self))")
      if response.succeeded { successes += 1 }
      return true
    }
    #expect(taken > 0)
    // A success only where the answer says "succeeded":true.
    #expect(successes > 0)
  }
}
