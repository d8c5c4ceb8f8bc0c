import Testing

@testable import Etcd

/// A txn's request is written straight into bytes (`Txn.body`), not through the JSON tree:
/// the text must be the gateway's JSON as the tree wrote it, member for member.
@Suite struct TxnBodyTests {
  private func b64(_ text: String) -> String { Base64.encode(Array(text.utf8)) }

  @Test func aHostsCommitAsTheGatewayReadsIt() {
    let txn = Txn(
      compare: [Compare(key: Array("/p/head".utf8), .modRevision(41))],
      success: [
        .put(key: Array("/p/log/7".utf8), value: Array("entry\n\"x\"".utf8)),
        .delete(key: Array("/p/log/".utf8), rangeEnd: Array("/p/log/5".utf8)),
        .put(key: Array("/p/head".utf8), value: []),
      ])
    let expected =
      #"{"compare":[{"result":"EQUAL","target":"MOD","key":"\#(b64("/p/head"))","mod_revision":"41"}],"#
      + #""success":[{"request_put":{"key":"\#(b64("/p/log/7"))","value":"\#(b64("entry\n\"x\""))"}},"#
      + #"{"request_delete_range":{"key":"\#(b64("/p/log/"))","range_end":"\#(b64("/p/log/5"))"}},"#
      + #"{"request_put":{"key":"\#(b64("/p/head"))","value":""}}],"failure":[]}"#
    #expect(String(decoding: txn.body, as: UTF8.self) == expected)
  }

  @Test func everyCompareAndTheReads() {
    let txn = Txn(
      compare: [
        Compare(key: [0x6B], .createRevision(0)), Compare(key: [0x6B], .version(3), .greater),
        Compare(key: [0x6B], .value([0xFF, 0x00]), .notEqual),
      ],
      success: [.delete(key: [0x6B], rangeEnd: [])],
      failure: [
        .range(RangeRequest(key: [0x6B], rangeEnd: [0x6C], limit: 64)), .range(RangeRequest(key: [0x6B])),
      ])
    let expected =
      #"{"compare":[{"result":"EQUAL","target":"CREATE","key":"aw==","create_revision":"0"},"#
      + #"{"result":"GREATER","target":"VERSION","key":"aw==","version":"3"},"#
      + #"{"result":"NOT_EQUAL","target":"VALUE","key":"aw==","value":"/wA="}],"#
      + #""success":[{"request_delete_range":{"key":"aw=="}}],"#
      + #""failure":[{"request_range":{"key":"aw==","range_end":"bA==","limit":"64"}},"#
      + #"{"request_range":{"key":"aw=="}}]}"#
    #expect(String(decoding: txn.body, as: UTF8.self) == expected)
  }
}
