import SectionShared

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

  /// A member the call tried before the last, and why it moved on from it.
  public struct Attempt: Equatable, Sendable {
    public let member: String
    public let kind: Kind
    public let detail: String
    /// Whether the member answered at all (with an error), rather than not being reached.
    public let answered: Bool
  }

  public let kind: Kind
  /// The call: "put", "range", "txn", "watch", "status", "compact".
  public let call: String
  /// The client URL of the member that answered or failed last; nil when none was tried.
  public let member: String?
  /// What the member or libcurl said, as one printable line of at most 300 characters: it is
  /// the member's text, shown in STATUS and the log, and must not forge a line there.
  public let detail: String
  /// True when a change may have been applied although no answer said so (a timeout or a
  /// connection lost after the request was sent): find out from etcd before re-running it.
  public let outcomeUnknown: Bool
  /// Whether the last member answered (with an error) rather than not being reached.
  public let answered: Bool
  /// The members tried before the last one in this call, in order.
  public let earlier: [Attempt]

  public init(
    _ kind: Kind, call: String, member: String?, detail: String, outcomeUnknown: Bool = false,
    answered: Bool = true, earlier: [Attempt] = []
  ) {
    self.kind = kind
    self.call = call
    self.member = member
    self.detail = VisibleText.line(detail)
    self.outcomeUnknown = outcomeUnknown
    self.answered = answered
    self.earlier = earlier
  }

  /// This error as an attempt that the call moved on from.
  var attempt: Attempt { Attempt(member: member ?? "-", kind: kind, detail: detail, answered: answered) }

  /// Every member's part, flat (for STATUS's `fleet-error` and the log): the last member's
  /// error, then each one tried before it.
  public var description: String {
    var text = "etcd \(call)"
    if let member { text += " on \(member)" }
    text += ": \(Self.summary(kind))"
    if !detail.isEmpty { text += " (\(detail))" }
    if outcomeUnknown { text += "; it may have been applied" }
    if !earlier.isEmpty {
      text +=
        "; tried before: "
        + earlier.map {
          "\($0.member): \(Self.summary($0.kind))" + ($0.detail.isEmpty ? "" : " (\($0.detail))")
        }
        .joined(separator: ", ")
    }
    return text
  }

  /// What is wrong in a few words, for a client's refusal: not the members' own texts (STATUS
  /// and the log have them), but how many of the `members` answer when none could serve.
  public func headline(members total: Int) -> String {
    let tried = earlier + [attempt]
    let waiting: [Kind] = [.noLeader, .unavailable, .timedOut]
    if tried.allSatisfy({ waiting.contains($0.kind) }), Set(tried.map(\.member)).count >= total {
      let answering = Set(tried.filter(\.answered).map(\.member)).count
      if answering == 0 { return "no etcd member answers (0 of \(total))" }
      if answering == total {
        return tried.allSatisfy { $0.kind == .noLeader }
          ? "etcd has no leader (\(total) of \(total) members answer)"
          : "etcd cannot take changes now (\(total) of \(total) members answer, none can)"
      }
      return "no quorum: \(answering) of \(total) etcd members answer"
    }
    let on = member.map { " (\($0))" } ?? ""
    switch kind {
    case .rejected, .malformed, .library:
      return "etcd \(call)\(on): \(Self.summary(kind)): \(VisibleText.line(detail, limit: 120))"
    default: return "etcd \(call)\(on): \(Self.summary(kind))"
    }
  }

  /// What the operator does about it, in a few words.
  public var remedy: String {
    switch kind {
    case .noLeader, .unavailable, .timedOut:
      "bring back the members that are down or cut off; sectionctl status and the log show each one's error"
    case .noSpace:
      "compact and defragment etcd, then disarm its NOSPACE alarm (docs/FLEET.md)"
    case .rejected(let code, _) where code == 7 || code == 16 || detail.contains("authentication failed"):
      "check this host's etcd user, password and role (docs/FLEET.md)"
    default: "sectionctl status and the log show etcd's answer"
    }
  }

  private static func summary(_ kind: Kind) -> String {
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
    code: Int, message: String, httpStatus: Int, call: String, member: String, mutating: Bool,
    earlier: [Attempt] = []
  ) -> EtcdError {
    func error(_ kind: Kind, unknown: Bool = false) -> EtcdError {
      EtcdError(
        kind, call: call, member: member, detail: message, outcomeUnknown: unknown && mutating,
        earlier: earlier)
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
    // No code: not etcd's gateway (a proxy in front of it, or another server on the port); a
    // 503 says it cannot serve now, as etcd's code 14 does.
    case 0 where httpStatus == 503: return error(.unavailable)
    default: return error(.rejected(code: code, httpStatus: httpStatus))
    }
  }
}
