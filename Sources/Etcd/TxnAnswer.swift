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
    var response = TxnResponse(header: ResponseHeader(), succeeded: false, responses: [])
    var seen = Members()
    let read = object { scanner, name in
      switch name {
      case "header" where seen.first(0): return Self.store(scanner.header(), in: &response.header)
      case "succeeded" where seen.first(1):
        response.succeeded = true
        return scanner.take("true")
      case "responses" where seen.first(2):
        guard scanner.take("[") else { return false }
        repeat {
          // The put's own header is not kept (the full parser does not read it), but checked.
          guard scanner.take(#"{"response_put":{"header":"#), scanner.header() != nil, scanner.take("}}")
          else {
            return false
          }
          response.responses.append(.put)
        } while scanner.take(",")
        return scanner.take("]")
      default: return false
      }
    }
    return read && atEnd ? response : nil
  }
}
