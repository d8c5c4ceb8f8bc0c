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

// A txn is written straight into the request's bytes, not built as a `JSON` tree and then
// serialized: a fleet host sends one a change, and the tree, its base64 Strings and their
// release were an eighth of a host's instructions a TOGGLE (docs/PERFORMANCE.md, "Fleet").
// The text is what the tree's serialization was: members in the same order, base64 and
// decimal digits, which need no escaping. Its fixed text is appended from static strings'
// bytes: appended as Strings' UTF-8 views, at 166 instructions each, the ten pieces of a
// compare cost a fleet host's commit 3,300 instructions.

extension Compare {
  func write(to output: inout [UInt8]) {
    let (name, field): (StaticString, StaticString) =
      switch target {
      case .version: ("VERSION", "version")
      case .createRevision: ("CREATE", "create_revision")
      case .modRevision: ("MOD", "mod_revision")
      case .value: ("VALUE", "value")
      }
    output.append(literal: #"{"result":""#)
    output += relation.rawValue.utf8
    output.append(literal: #"","target":""#)
    output.append(literal: name)
    output.append(literal: #"","key":""#)
    Base64.encode(key, into: &output)
    output.append(literal: #"",""#)
    output.append(literal: field)
    output.append(literal: #"":""#)
    switch target {
    case .version(let number), .createRevision(let number), .modRevision(let number):
      output += String(number).utf8
    case .value(let bytes): Base64.encode(bytes, into: &output)
    }
    output.append(literal: #""}"#)
  }
}

extension Operation {
  func write(to output: inout [UInt8]) {
    switch self {
    case .put(let key, let value):
      output.append(literal: #"{"request_put":{"key":""#)
      Base64.encode(key, into: &output)
      output.append(literal: #"","value":""#)
      Base64.encode(value, into: &output)
      output.append(literal: #""}}"#)
    case .range(let request):
      output.append(literal: #"{"request_range":"#)
      output += request.json.serializedBytes()
      output.append(literal: "}")
    case .delete(let key, let rangeEnd):
      output.append(literal: #"{"request_delete_range":{"key":""#)
      Base64.encode(key, into: &output)
      if !rangeEnd.isEmpty {
        output.append(literal: #"","range_end":""#)
        Base64.encode(rangeEnd, into: &output)
      }
      output.append(literal: #""}}"#)
    }
  }
}

extension Txn {
  /// The request's body: `{"compare":[…],"success":[…],"failure":[…]}`.
  var body: [UInt8] {
    var output: [UInt8] = []
    output.reserveCapacity(
      success.reduce(256) { total, operation in
        guard case .put(let key, let value) = operation else { return total + 128 }
        return total + (key.count + value.count) * 4 / 3 + 64
      })
    output.append(literal: #"{"compare":["#)
    Self.write(compare, to: &output) { $0.write(to: &$1) }
    output.append(literal: #"],"success":["#)
    Self.write(success, to: &output) { $0.write(to: &$1) }
    output.append(literal: #"],"failure":["#)
    Self.write(failure, to: &output) { $0.write(to: &$1) }
    output.append(literal: "]}")
    return output
  }

  /// The elements of a JSON array, comma-separated.
  private static func write<Element>(
    _ elements: [Element], to output: inout [UInt8], _ write: (Element, inout [UInt8]) -> Void
  ) {
    for (index, element) in elements.enumerated() {
      if index > 0 { output.append(UInt8(ascii: ",")) }
      write(element, &output)
    }
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
          ("progress_notify", progressNotify ? .bool(true) : nil),
          ("filters", withoutDeletes ? .array([.string("NODELETE")]) : nil),
          ("prev_kv", prevKV ? .bool(true) : nil),
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

extension [UInt8] {
  /// Appends the bytes of a literal, as one copy.
  fileprivate mutating func append(literal text: StaticString) {
    text.withUTF8Buffer { append(contentsOf: $0) }
  }
}
