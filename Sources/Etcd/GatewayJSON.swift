import SectionShared

// The gateway's JSON (grpc-gateway's mapping of etcd's protobufs): keys and values in base64,
// 64-bit integers as strings, members with default values left out (a failed compare has no
// `succeeded`, a revision 0 no `revision`), proto field names as they are (`member_id`,
// `dbSize`). Every reader below takes a missing member as its default.

/// An answer that does not have the shape etcd's are documented to have.
struct MalformedAnswer: Error {
  let reason: String
}

extension JSON {
  static func bytes(_ bytes: [UInt8]) -> JSON { .string(Base64.encode(bytes)) }
  static func int64(_ value: Int64) -> JSON { .string(String(value)) }

  /// The object with the members whose value is not the default, as the gateway writes them.
  static func message(_ members: [(String, JSON?)]) -> JSON {
    .object(members.compactMap { name, value in value.map { (name, $0) } })
  }

  /// The integer member `name` (a string in the gateway's JSON, or a number), as `Integer`.
  func integer<Integer: FixedWidthInteger>(_ name: String) throws(MalformedAnswer) -> Integer {
    let found: Integer?
    switch self[name] {
    case nil, .null: return 0
    case .integer(let value): found = Integer(exactly: value)
    case .string(let text): found = Integer(text)
    case let other?: throw MalformedAnswer(reason: "\(name) is \(other.kind), expected a number")
    }
    guard let found else { throw MalformedAnswer(reason: "\(name) is not a number of \(Integer.self)") }
    return found
  }

  func bool(_ name: String) throws(MalformedAnswer) -> Bool {
    switch self[name] {
    case nil, .null: return false
    case .bool(let value): return value
    case let other?: throw MalformedAnswer(reason: "\(name) is \(other.kind), expected a boolean")
    }
  }

  func string(_ name: String) throws(MalformedAnswer) -> String {
    switch self[name] {
    case nil, .null: return ""
    case .string(let text): return text
    case let other?: throw MalformedAnswer(reason: "\(name) is \(other.kind), expected a string")
    }
  }

  func base64(_ name: String) throws(MalformedAnswer) -> [UInt8] {
    let text = try string(name)
    guard let bytes = Base64.decode(text) else { throw MalformedAnswer(reason: "\(name) is not base64") }
    return bytes
  }

  func array(_ name: String) throws(MalformedAnswer) -> [JSON] {
    switch self[name] {
    case nil, .null: return []
    case .array(let elements): return elements
    case let other?: throw MalformedAnswer(reason: "\(name) is \(other.kind), expected an array")
    }
  }

  /// The member `name` as an object; an empty object when it is missing.
  func object(_ name: String) throws(MalformedAnswer) -> JSON {
    switch self[name] {
    case nil, .null: return .object([])
    case .object(let members): return .object(members)
    case let other?: throw MalformedAnswer(reason: "\(name) is \(other.kind), expected an object")
    }
  }
}

extension ResponseHeader {
  init(_ json: JSON) throws(MalformedAnswer) {
    let header = try json.object("header")
    clusterID = try header.integer("cluster_id")
    memberID = try header.integer("member_id")
    revision = try header.integer("revision")
    raftTerm = try header.integer("raft_term")
  }
}

extension KeyValue {
  init(_ json: JSON) throws(MalformedAnswer) {
    key = try json.base64("key")
    value = try json.base64("value")
    createRevision = try json.integer("create_revision")
    modRevision = try json.integer("mod_revision")
    version = try json.integer("version")
    lease = try json.integer("lease")
  }
}

extension RangeRequest {
  var json: JSON {
    .message([
      ("key", .bytes(key)), ("range_end", rangeEnd.isEmpty ? nil : .bytes(rangeEnd)),
      ("limit", limit == 0 ? nil : .int64(limit)), ("revision", revision == 0 ? nil : .int64(revision)),
      ("serializable", serializable ? .bool(true) : nil),
    ])
  }
}

extension RangeResponse {
  init(_ json: JSON) throws(MalformedAnswer) {
    header = try ResponseHeader(json)
    var kvs: [KeyValue] = []
    for element in try json.array("kvs") { kvs.append(try KeyValue(element)) }
    self.kvs = kvs
    more = try json.bool("more")
    count = try json.integer("count")
  }
}

extension Compare {
  var json: JSON {
    let (name, field, value): (String, String, JSON) =
      switch target {
      case .version(let version): ("VERSION", "version", .int64(version))
      case .createRevision(let revision): ("CREATE", "create_revision", .int64(revision))
      case .modRevision(let revision): ("MOD", "mod_revision", .int64(revision))
      case .value(let bytes): ("VALUE", "value", .bytes(bytes))
      }
    return .object([
      ("result", .string(relation.rawValue)), ("target", .string(name)), ("key", .bytes(key)), (field, value),
    ])
  }
}

extension Operation {
  var json: JSON {
    switch self {
    case .put(let key, let value):
      .object([("request_put", .object([("key", .bytes(key)), ("value", .bytes(value))]))])
    case .range(let request): .object([("request_range", request.json)])
    case .delete(let key, let rangeEnd):
      .object([
        (
          "request_delete_range",
          .message([("key", .bytes(key)), ("range_end", rangeEnd.isEmpty ? nil : .bytes(rangeEnd))])
        )
      ])
    }
  }
}

extension Txn {
  var json: JSON {
    .object([
      ("compare", .array(compare.map(\.json))), ("success", .array(success.map(\.json))),
      ("failure", .array(failure.map(\.json))),
    ])
  }
}

extension TxnResponse {
  init(_ json: JSON) throws(MalformedAnswer) {
    header = try ResponseHeader(json)
    succeeded = try json.bool("succeeded")
    var responses: [OperationResponse] = []
    for element in try json.array("responses") {
      if element["response_put"] != nil {
        responses.append(.put)
      } else if element["response_range"] != nil {
        responses.append(.range(try RangeResponse(try element.object("response_range"))))
      } else if element["response_delete_range"] != nil {
        responses.append(
          .delete(deleted: try element.object("response_delete_range").integer("deleted") as Int64))
      } else {
        throw MalformedAnswer(reason: "a transaction's response of no known kind")
      }
    }
    self.responses = responses
  }
}

extension MemberStatus {
  init(_ json: JSON) throws(MalformedAnswer) {
    header = try ResponseHeader(json)
    version = try json.string("version")
    dbSize = try json.integer("dbSize")
    leader = try json.integer("leader")
    raftIndex = try json.integer("raftIndex")
    raftTerm = try json.integer("raftTerm")
    var errors: [String] = []
    for element in try json.array("errors") {
      guard case .string(let text) = element else {
        throw MalformedAnswer(reason: "errors holds \(element.kind)")
      }
      errors.append(text)
    }
    self.errors = errors
  }
}

extension WatchRequest {
  var json: JSON {
    .object([
      (
        "create_request",
        .message([
          ("key", .bytes(key)), ("range_end", rangeEnd.isEmpty ? nil : .bytes(rangeEnd)),
          ("start_revision", startRevision == 0 ? nil : .int64(startRevision)),
          ("progress_notify", progressNotify ? .bool(true) : nil), ("prev_kv", prevKV ? .bool(true) : nil),
        ])
      )
    ])
  }
}

extension WatchUpdate {
  /// The update in one `result` of a watch stream.
  init(result: JSON) throws(MalformedAnswer) {
    let revision = try ResponseHeader(result).revision
    if try result.bool("canceled") {
      let compactRevision: Int64 = try result.integer("compact_revision")
      self =
        compactRevision > 0
        ? .compacted(compactRevision: compactRevision) : .canceled(reason: try result.string("cancel_reason"))
      return
    }
    if try result.bool("created") {
      self = .created(revision: revision)
      return
    }
    var events: [KeyEvent] = []
    for element in try result.array("events") {
      let kind: KeyEvent.Kind =
        switch try element.string("type") {
        case "", "PUT": .put
        case "DELETE": .delete
        case let other: throw MalformedAnswer(reason: "an event of type \(other)")
        }
      let previous = element["prev_kv"] == nil ? nil : try KeyValue(try element.object("prev_kv"))
      events.append(KeyEvent(kind: kind, kv: try KeyValue(try element.object("kv")), prevKV: previous))
    }
    self = events.isEmpty ? .progress(revision: revision) : .events(events, revision: revision)
  }
}
