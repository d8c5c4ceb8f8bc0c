/// Reads a txn's answer whose operations were all puts straight from its bytes, without building
/// the JSON tree: a fleet host's commit is such a txn, one a change, and the tree and its
/// release were about a tenth of the committing host's instructions (docs/PERFORMANCE.md,
/// "Fleet").
///
/// Only `{"header":{…},"succeeded":true,"responses":[{"response_put":{"header":{…}}},…]}` is
/// recognized, `succeeded` left out (a failed compare, as the gateway writes false) or true;
/// anything else (a range's or a delete's answer, an error, an unknown member) is nil, and the
/// caller parses the answer in full (`GatewayScanner`).
enum TxnAnswer {
  /// The answer, as the full parser would read it; nil when it is not one this reader knows.
  static func response(in body: ArraySlice<UInt8>) -> TxnResponse? {
    GatewayScanner.read(body) { $0.txnResponse() }
  }
}

extension GatewayScanner {
  fileprivate mutating func txnResponse() -> TxnResponse? {
    guard take("{") else { return nil }
    var response = TxnResponse(header: ResponseHeader(), succeeded: false, responses: [])
    var seen = Members()
    repeat {
      switch name() {
      case "header" where seen.first(0):
        guard let header = header() else { return nil }
        response.header = header
      case "succeeded" where seen.first(1):
        guard take("true") else { return nil }
        response.succeeded = true
      case "responses" where seen.first(2):
        guard take("[") else { return nil }
        repeat {
          // The put's own header is not kept (the full parser does not read it), but checked.
          guard take(#"{"response_put":{"header":"#), header() != nil, take("}}") else { return nil }
          response.responses.append(.put)
        } while take(",")
        guard take("]") else { return nil }
      default: return nil
      }
    } while take(",")
    return take("}") && atEnd ? response : nil
  }
}
