/// Why an etcd call failed, naming the call and the member, typed so that the fleet can tell
/// what to do: try another member, report `ERR UNAVAILABLE`, resynchronise after a compaction,
/// or refuse a group that is too large before anything is applied.
public struct EtcdError: Error, Equatable, CustomStringConvertible {
  public enum Kind: Equatable, Sendable {
    /// libcurl could not be loaded (the detail names the library and the package).
    case library
    /// No member could be reached, or the member answered that it cannot serve now.
    case unavailable
    /// The member has no leader (it is cut off from a majority, or an election is on).
    case noLeader
    /// No answer within the time allowed.
    case timedOut
    /// The request is over etcd's size limit (1.5 MiB by default, `--max-request-bytes`).
    case tooLarge
    /// The answer is over this client's limit (`maximumAnswerBytes`): a range that takes
    /// fewer keys a request may fit. Every member would send the same, so no other is asked.
    case answerTooLarge
    /// A transaction with more operations than etcd allows (128 by default, `--max-txn-ops`).
    case tooManyOperations
    /// The revision asked for was compacted away; etcd keeps history from `revision` on.
    case compacted(revision: Int64?)
    /// The member's backend is over its quota (`--quota-backend-bytes`); only reads and
    /// deletes work until an operator compacts, defragments and disarms the alarm.
    case noSpace
    /// The member answered something this client cannot read.
    case malformed
    /// Any other refusal: the gRPC status code and HTTP status the gateway gave.
    case rejected(code: Int, httpStatus: Int)
  }

  public let kind: Kind
  /// The call: "put", "range", "txn", "watch", "status", "compact".
  public let call: String
  /// The client URL of the member that answered or failed last; nil when none was tried.
  public let member: String?
  /// What the member or libcurl said.
  public let detail: String
  /// True when a change may have been applied although no answer said so (a timeout or a
  /// connection lost after the request was sent): find out from etcd before re-running it.
  public let outcomeUnknown: Bool

  public init(_ kind: Kind, call: String, member: String?, detail: String, outcomeUnknown: Bool = false) {
    self.kind = kind
    self.call = call
    self.member = member
    self.detail = detail
    self.outcomeUnknown = outcomeUnknown
  }

  public var description: String {
    var text = "etcd \(call)"
    if let member { text += " on \(member)" }
    text += ": \(summary)"
    if !detail.isEmpty { text += " (\(detail))" }
    if outcomeUnknown { text += "; it may have been applied" }
    return text
  }

  private var summary: String {
    switch kind {
    case .library: "libcurl is not available"
    case .unavailable: "unavailable"
    case .noLeader: "the member has no leader"
    case .timedOut: "timed out"
    case .tooLarge: "request too large"
    case .answerTooLarge: "answer too large"
    case .tooManyOperations: "too many operations in one transaction"
    case .compacted(let revision):
      revision.map { "revision compacted (history starts at \($0))" } ?? "revision compacted"
    case .noSpace: "the member is out of space (quota)"
    case .malformed: "unreadable answer"
    case .rejected(let code, let status): "refused (code \(code), HTTP \(status))"
    }
  }

  /// The error in the gateway's JSON body (`{"error":…,"message":…,"code":N}`, or a watch
  /// stream's `{"error":{"grpc_code":N,"message":…}}`), classified by gRPC code and message.
  static func fromGateway(
    code: Int, message: String, httpStatus: Int, call: String, member: String, mutating: Bool
  ) -> EtcdError {
    func error(_ kind: Kind, unknown: Bool = false) -> EtcdError {
      EtcdError(kind, call: call, member: member, detail: message, outcomeUnknown: unknown && mutating)
    }
    switch code {
    case 14 where message.contains("no leader"): return error(.noLeader)
    // etcd's own timeout (5 s plus two election timeouts) and a lost leader: the proposal
    // may still commit.
    case 14 where message.contains("timed out") || message.contains("leader changed"):
      return error(.timedOut, unknown: true)
    case 14: return error(.unavailable, unknown: true)
    case 4: return error(.timedOut, unknown: true)
    case 11 where message.contains("compacted"): return error(.compacted(revision: nil))
    case 3 where message.contains("too large"): return error(.tooLarge)
    case 3 where message.contains("too many operations"): return error(.tooManyOperations)
    case 8 where message.contains("space exceeded"): return error(.noSpace)
    case 8 where message.contains("larger than max"): return error(.tooLarge)
    default: return error(.rejected(code: code, httpStatus: httpStatus))
    }
  }
}
