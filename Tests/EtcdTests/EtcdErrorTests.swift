import Testing

@testable import Etcd

/// What an etcd error shows: a member's text as one printable line, every member tried once
/// and flat (not nested in the next one's), and for a client's refusal a verdict in a few words.
@Suite struct EtcdErrorTests {
  let hostile = "no \u{1B}]0;PWNED\u{07}\r\nSECOND LINE"

  @Test func aMembersTextIsOnePrintableLine() {
    let error = EtcdError.fromGateway(
      code: 14, message: hostile, httpStatus: 503, call: "txn", member: "http://m1", mutating: false)
    #expect(error.detail == "no \\x1b]0;PWNED\\x07\\x0d\\x0aSECOND LINE")
    for text in [error.description, error.headline(members: 1)] {
      #expect(!text.unicodeScalars.contains { $0.value < 0x20 || $0.value == 0x7F }, "\(text)")
    }
    let long = EtcdError(
      .rejected(code: 2, httpStatus: 500), call: "put", member: nil,
      detail: String(repeating: "x", count: 5000))
    #expect(long.detail.count == 303)
  }

  /// No code (not etcd's gateway): a 503 is unavailable, to try the next member.
  @Test func aBare503IsUnavailable() {
    let error = EtcdError.fromGateway(
      code: 0, message: "busy", httpStatus: 503, call: "range", member: "http://m1", mutating: false)
    #expect(error.kind == .unavailable)
  }

  @Test func noQuorumCountsTheMembersThatAnswer() {
    let refused = EtcdError(
      .unavailable, call: "txn", member: "http://m1", detail: "Couldn't connect", answered: false)
    let leaderless = EtcdError(.noLeader, call: "txn", member: "http://m3", detail: "etcdserver: no leader")
    let last = EtcdError(
      .unavailable, call: "txn", member: "http://m2", detail: "Couldn't connect", answered: false,
      earlier: [refused.attempt, leaderless.attempt])
    #expect(last.headline(members: 3) == "no quorum: 1 of 3 etcd members answer")
    #expect(!last.headline(members: 3).contains("etcdserver"))
    #expect(
      last.description
        == "etcd txn on http://m2: unavailable (Couldn't connect); tried before: http://m1: unavailable (Couldn't connect), http://m3: the member has no leader (etcdserver: no leader)"
    )
    let none = EtcdError(
      .unavailable, call: "txn", member: "http://m2", detail: "", answered: false, earlier: [refused.attempt])
    #expect(none.headline(members: 2) == "no etcd member answers (0 of 2)")
    // Not every member tried (a change timed out on one): that member, not a count.
    let timedOut = EtcdError(
      .timedOut, call: "txn", member: "http://m1", detail: "", outcomeUnknown: true, answered: false)
    #expect(timedOut.headline(members: 3) == "etcd txn (http://m1): timed out")
  }

  @Test func aRefusalNamesEtcdsReasonAndTheFix() {
    let error = EtcdError.fromGateway(
      code: 3, message: "etcdserver: authentication failed, invalid user ID or password", httpStatus: 400,
      call: "authenticate", member: "http://m1", mutating: false)
    #expect(error.headline(members: 3).contains("authentication failed"))
    let denied = EtcdError.fromGateway(
      code: 7, message: "etcdserver: permission denied", httpStatus: 403, call: "txn", member: "http://m1",
      mutating: true)
    #expect(denied.remedy.contains("role"))
  }
}
