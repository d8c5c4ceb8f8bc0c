/// The header of every answer: which cluster and member answered, at which revision.
public struct ResponseHeader: Equatable, Sendable {
  public var clusterID: UInt64 = 0
  public var memberID: UInt64 = 0
  /// The store's revision when the member answered (after the change, for a change).
  public var revision: Int64 = 0
  public var raftTerm: UInt64 = 0
}

/// A key as etcd keeps it.
public struct KeyValue: Equatable, Sendable {
  public var key: [UInt8]
  public var value: [UInt8]
  /// The revision of the change that created the key (since its last deletion).
  public var createRevision: Int64
  /// The revision of the key's last change.
  public var modRevision: Int64
  /// How many times the key changed since it was created (1 after the first put).
  public var version: Int64
  public var lease: Int64
}

/// A read of one key or of a range `[key, rangeEnd)`.
public struct RangeRequest: Equatable, Sendable {
  public var key: [UInt8]
  /// Empty: the key alone; `[0]`: every key from `key` on.
  public var rangeEnd: [UInt8]
  /// The store as of this revision (0: the newest). Compacted revisions are refused.
  public var revision: Int64
  /// At most this many keys (0: all).
  public var limit: Int64
  /// Answered by the member from its own store without asking the leader: quicker, and
  /// possible without a leader, but possibly stale.
  public var serializable: Bool

  public init(
    key: [UInt8], rangeEnd: [UInt8] = [], revision: Int64 = 0, limit: Int64 = 0, serializable: Bool = false
  ) {
    self.key = key
    self.rangeEnd = rangeEnd
    self.revision = revision
    self.limit = limit
    self.serializable = serializable
  }

  /// Every key that starts with `prefix`.
  public static func prefix(
    _ prefix: [UInt8], revision: Int64 = 0, limit: Int64 = 0, serializable: Bool = false
  ) -> RangeRequest {
    RangeRequest(
      key: prefix, rangeEnd: prefixEnd(prefix), revision: revision, limit: limit, serializable: serializable)
  }

  /// The first key after every key starting with `prefix`: its last byte below 0xFF plus one,
  /// the bytes after it dropped; `[0]` (every key) when there is none.
  public static func prefixEnd(_ prefix: [UInt8]) -> [UInt8] {
    guard let last = prefix.lastIndex(where: { $0 < 0xFF }) else { return [0] }
    return prefix[..<last] + [prefix[last] + 1]
  }
}

public struct RangeResponse: Equatable, Sendable {
  public var header: ResponseHeader
  public var kvs: [KeyValue]
  /// More keys are in the range than `limit` let through.
  public var more: Bool
  public var count: Int64
}

public struct PutResponse: Equatable, Sendable {
  public var header: ResponseHeader
}

/// One condition of a transaction: the key's revision, version or value compared with one given.
public struct Compare: Equatable, Sendable {
  public enum Target: Equatable, Sendable {
    case version(Int64)
    case createRevision(Int64)
    case modRevision(Int64)
    case value([UInt8])
  }

  public enum Relation: String, Sendable {
    case equal = "EQUAL"
    case greater = "GREATER"
    case less = "LESS"
    case notEqual = "NOT_EQUAL"
  }

  public var key: [UInt8]
  public var target: Target
  public var relation: Relation

  public init(key: [UInt8], _ target: Target, _ relation: Relation = .equal) {
    self.key = key
    self.target = target
    self.relation = relation
  }
}

/// One operation of a transaction.
public enum Operation: Equatable, Sendable {
  case put(key: [UInt8], value: [UInt8])
  case range(RangeRequest)
  /// Deletes `key`, or the range `[key, rangeEnd)` when `rangeEnd` is not empty.
  case delete(key: [UInt8], rangeEnd: [UInt8])
}

/// A compare-and-swap: `success` runs when every compare holds, `failure` otherwise, both at
/// one new revision (when they change anything).
public struct Txn: Equatable, Sendable {
  public var compare: [Compare]
  public var success: [Operation]
  public var failure: [Operation]

  public init(compare: [Compare], success: [Operation], failure: [Operation] = []) {
    self.compare = compare
    self.success = success
    self.failure = failure
  }
}

extension Txn {
  /// Whether a branch changes anything. A txn that only reads (a catch-up's head and log at one
  /// revision) is a read: sent again to the next member after a timeout, and never "may have
  /// been applied".
  var writes: Bool {
    // Not `success + failure`: a new array, on every commit of a fleet host.
    let isWrite = { (operation: Operation) -> Bool in
      if case .range = operation { return false }
      return true
    }
    return success.contains(where: isWrite) || failure.contains(where: isWrite)
  }
}

public enum OperationResponse: Equatable, Sendable {
  case put
  case range(RangeResponse)
  case delete(deleted: Int64)
}

public struct TxnResponse: Equatable, Sendable {
  public var header: ResponseHeader
  /// Whether every compare held (and `success` ran).
  public var succeeded: Bool
  /// One answer per operation of the branch that ran.
  public var responses: [OperationResponse]
}

/// A member's own view (maintenance status).
public struct MemberStatus: Equatable, Sendable {
  public var header: ResponseHeader
  public var version: String
  public var dbSize: Int64
  /// The leader's member id; 0 when the member knows of none.
  public var leader: UInt64
  public var raftIndex: UInt64
  public var raftTerm: UInt64
  /// The member's alarms and errors ("NOSPACE", ...).
  public var errors: [String]
}

/// A watch on a key or range from a revision on.
public struct WatchRequest: Equatable, Sendable {
  public var key: [UInt8]
  public var rangeEnd: [UInt8]
  /// The first revision to report (0: changes from now on). A compacted one ends the watch
  /// with `.compacted`.
  public var startRevision: Int64
  /// Empty updates now and then (every 10 minutes by default in etcd 3.4) saying up to which
  /// revision the watch has seen everything.
  public var progressNotify: Bool
  /// Each event carries the key as it was before the change.
  public var prevKV: Bool
  /// Deletions are left out of the stream by etcd (its `NODELETE` filter): a watcher that
  /// acts on puts alone is then not sent a range deleted, which etcd writes out as one event a
  /// key to every watch (a fleet trimming 1,000 log entries at each snapshot).
  public var withoutDeletes: Bool

  public init(
    key: [UInt8], rangeEnd: [UInt8] = [], startRevision: Int64 = 0, progressNotify: Bool = true,
    prevKV: Bool = false, withoutDeletes: Bool = false
  ) {
    self.key = key
    self.rangeEnd = rangeEnd
    self.startRevision = startRevision
    self.progressNotify = progressNotify
    self.prevKV = prevKV
    self.withoutDeletes = withoutDeletes
  }

  /// Every key that starts with `prefix`.
  public static func prefix(
    _ prefix: [UInt8], startRevision: Int64 = 0, progressNotify: Bool = true, prevKV: Bool = false,
    withoutDeletes: Bool = false
  ) -> WatchRequest {
    WatchRequest(
      key: prefix, rangeEnd: RangeRequest.prefixEnd(prefix), startRevision: startRevision,
      progressNotify: progressNotify, prevKV: prevKV, withoutDeletes: withoutDeletes)
  }
}

/// A change a watch saw.
public struct KeyEvent: Equatable, Sendable {
  public enum Kind: Sendable { case put, delete }
  public var kind: Kind
  /// The key after the change (for a delete: its key and the deletion's `modRevision`).
  public var kv: KeyValue
  /// The key before the change, when the watch asked for it and there was one.
  public var prevKV: KeyValue?
}

/// What a watch reports, in order.
public enum WatchUpdate: Equatable, Sendable {
  /// The watch is in place; `revision` is the store's revision then.
  case created(revision: Int64)
  /// Changes, in revision order; `revision` is the store's revision when they were sent.
  case events([KeyEvent], revision: Int64)
  /// Everything up to `revision` was reported (progress_notify).
  case progress(revision: Int64)
  /// The start revision was compacted: history begins at `compactRevision`. The watch is over:
  /// load the state afresh and watch from its revision.
  case compacted(compactRevision: Int64)
  /// etcd ended the watch (for instance "no leader", with the has-leader header). Over.
  case canceled(reason: String)
  /// The stream broke or could not start. Over: watch again from the revision after the last seen.
  case failed(EtcdError)
}
