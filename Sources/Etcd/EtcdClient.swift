import CCurl
import SectionShared
import Systemd

/// A client of etcd's v3 JSON gateway (etcd 3.4 and later, path `/v3/`), on libcurl driven by
/// an sd-event loop: every call returns at once and completes on the loop's thread.
///
/// It knows the cluster's client URLs and talks to one member at a time. A call moves on to
/// the next member when the one it tried did not get the request (connection refused, no
/// leader: every request carries `Grpc-Metadata-hasleader: true`, so a member without a leader
/// refuses it at once instead of holding it for etcd's 7 s), and, for reads, when the member
/// did not answer in time. A change that timed out or lost its connection after it was sent is
/// not re-sent: its error says `outcomeUnknown`, for the caller to look before re-running it.
/// Calls still under way when the client goes away end without their completion running.
public final class EtcdClient {
  public struct Configuration: Sendable {
    /// The members' client URLs (`http://127.0.0.1:2379`), tried in order.
    public var members: [String]
    /// The time one attempt on one member may take, in milliseconds. etcd itself gives up on a
    /// proposal after 5 s plus two election timeouts (7 s with the defaults).
    public var requestTimeout: Int
    /// The time a connection may take to open, in milliseconds: on loopback or a LAN an open
    /// takes well under a millisecond, so a member that takes longer is treated as down.
    public var connectTimeout: Int
    /// The most of an answer (or of one watch update) kept in memory. etcd refuses requests
    /// over 1.5 MiB, but a range over a prefix answers with every key under it.
    public var maximumAnswerBytes: Int
    /// For `https://` members: the CA to check them with, and this client's certificate and
    /// key when the members ask for one (`--client-cert-auth`). Files in PEM.
    public var tls: TLSFiles?
    /// etcd's user and password, when its auth is on: the client asks for a token with them
    /// before its first request, and again when etcd says the token is no longer valid.
    public var credentials: Credentials?

    public init(
      members: [String], requestTimeout: Int = 5000, connectTimeout: Int = 1000,
      maximumAnswerBytes: Int = 64 << 20, tls: TLSFiles? = nil, credentials: Credentials? = nil
    ) {
      self.tls = tls
      self.credentials = credentials
      self.members = members.map { $0.hasSuffix("/") ? String($0.dropLast()) : $0 }
      self.requestTimeout = requestTimeout
      self.connectTimeout = connectTimeout
      self.maximumAnswerBytes = maximumAnswerBytes
    }
  }

  public struct TLSFiles: Sendable {
    public var certificateAuthority: String
    public var certificate: String?
    public var key: String?

    public init(certificateAuthority: String, certificate: String? = nil, key: String? = nil) {
      self.certificateAuthority = certificateAuthority
      self.certificate = certificate
      self.key = key
    }
  }

  public struct Credentials: Sendable, Equatable {
    public var user: String
    public var password: String

    public init(user: String, password: String) {
      self.user = user
      self.password = password
    }
  }

  public let configuration: Configuration
  let multi: CurlMulti
  private var current = 0
  /// etcd's auth token, once `authorized` got one; nil without credentials.
  private var token: String?
  /// Calls waiting for the token being asked for.
  private var waitingForToken: [(EtcdError?) -> Void]?
  static let headers = [
    "Grpc-Metadata-hasleader: true",
    // curl waits up to a second for a 100 Continue before a body over 1 MiB; etcd sends none.
    "Expect:",
    // Neither is read by etcd's gateway, which takes every body as JSON (its marshaler for any
    // type; for `application/json` too) and answers JSON: "Content-Type:" keeps curl's default
    // (`application/x-www-form-urlencoded`) off, "Accept:" its `*/*`. curl formats each header
    // byte by byte: the two cost a fleet host's commit 5,800 instructions.
    "Content-Type:", "Accept:",
  ]

  /// The member the next call goes to first.
  public var member: String { configuration.members[current] }

  /// Loads libcurl (once a process: the first client pays for it). Throws `.library` when it
  /// cannot be loaded, saying which package to install.
  public init(loop: EventLoop, configuration: Configuration) throws(EtcdError) {
    precondition(!configuration.members.isEmpty, "an etcd client needs at least one member")
    self.configuration = configuration
    multi = try CurlMulti(loop: loop)
  }

  /// The version of libcurl in use (`curl_version()`).
  public var libraryVersion: String { String(cString: ccurl_version()) }

  public func put(
    key: [UInt8], value: [UInt8], completion: @escaping (Result<PutResponse, EtcdError>) -> Void
  ) {
    let body = JSON.object([("key", .bytes(key)), ("value", .bytes(value))])
    call("put", "/v3/kv/put", body.serializedBytes(), mutating: true) {
      (json) throws(MalformedAnswer) in
      PutResponse(header: try ResponseHeader(json))
    } completion: {
      completion($0)
    }
  }

  public func range(_ request: RangeRequest, completion: @escaping (Result<RangeResponse, EtcdError>) -> Void)
  {
    call("range", "/v3/kv/range", request.json.serializedBytes(), mutating: false) {
      (json) throws(MalformedAnswer) in
      try RangeResponse(json)
    } completion: {
      completion($0)
    }
  }

  /// A transaction. `isStale`, asked when etcd's answer (HTTP 200) has come: true when the
  /// caller learned the outcome another way meanwhile (a fleet host sees its own entry in its
  /// watch, most often before the answer), and the answer is then neither read nor handed over;
  /// a failure always is.
  public func txn(
    _ txn: Txn, isStale: (() -> Bool)? = nil, completion: @escaping (Result<TxnResponse, EtcdError>) -> Void
  ) {
    // The answer's reading (3,700 instructions of a fleet host's commit) skipped when stale: an
    // answer of nil is one nobody waits for.
    call(
      "txn", "/v3/kv/txn", txn.body, mutating: txn.writes,
      read: { answer -> TxnResponse?? in
        isStale?() == true ? .some(nil) : TxnAnswer.response(in: answer).map { $0 }
      }
    ) { (json) throws(MalformedAnswer) -> TxnResponse? in
      try TxnResponse(json)
    } completion: { (result: Result<TxnResponse?, EtcdError>) in
      switch result {
      case .success(let answer?): completion(.success(answer))
      case .success(nil): break
      case .failure(let error): completion(.failure(error))
      }
    }
  }

  /// Drops the history before `revision` (physically: the answer comes once it is gone).
  public func compact(revision: Int64, completion: @escaping (Result<ResponseHeader, EtcdError>) -> Void) {
    let body = JSON.object([("revision", .int64(revision)), ("physical", .bool(true))])
    call("compact", "/v3/kv/compaction", body.serializedBytes(), mutating: true) {
      (json) throws(MalformedAnswer) in
      try ResponseHeader(json)
    } completion: {
      completion($0)
    }
  }

  /// A member's status (version, leader, raft index, alarms): the current member's, or, when
  /// it does not answer, the next's (the answer's `header.memberID` says whose).
  public func status(completion: @escaping (Result<MemberStatus, EtcdError>) -> Void) {
    call("status", "/v3/maintenance/status", Array("{}".utf8), mutating: false) {
      (json) throws(MalformedAnswer) in
      try MemberStatus(json)
    } completion: {
      completion($0)
    }
  }

  /// One unary call, tried on one member after another as the class comment says.
  private func call<Answer>(
    _ name: String, _ path: String, _ body: [UInt8], mutating: Bool,
    read: ((ArraySlice<UInt8>) -> Answer?)? = nil, decode: @escaping (JSON) throws(MalformedAnswer) -> Answer,
    completion: @escaping (Result<Answer, EtcdError>) -> Void
  ) {
    authorized { [weak self] error in
      if let error { return completion(.failure(error)) }
      self?.attempt(name, path, body, mutating, read, decode, completion, tried: 0, earlier: [])
    }
  }

  /// Every request's headers: the has-leader header, the ones curl adds kept off, and the token
  /// under auth; made again when the token changes.
  var requestHeaders: HeaderList {
    if let headerList, headerList.token == token { return headerList.list }
    let list = HeaderList(token.map { Self.headers + ["Authorization: \($0)"] } ?? Self.headers)
    headerList = (token, list)
    return list
  }
  private var headerList: (token: String?, list: HeaderList)?

  /// Runs `body` once a token is at hand (at once without credentials), or with the reason
  /// there is none: one authenticate call for every call that waits for it.
  func authorized(_ body: @escaping (EtcdError?) -> Void) {
    guard let credentials = configuration.credentials, token == nil else { return body(nil) }
    guard waitingForToken == nil else { return waitingForToken!.append(body) }
    waitingForToken = [body]
    let request = JSON.object([
      ("name", .string(credentials.user)), ("password", .string(credentials.password)),
    ])
    attempt(
      "authenticate", "/v3/auth/authenticate", request.serializedBytes(), false, nil,
      { (json) throws(MalformedAnswer) in try json.string("token") },
      { [weak self] result in
        guard let self else { return }
        let waiting = self.waitingForToken ?? []
        self.waitingForToken = nil
        switch result {
        case .success(let token):
          self.token = token
          for body in waiting { body(nil) }
        case .failure(let error):
          for body in waiting { body(error) }
        }
      }, tried: 0, earlier: [])
  }

  /// etcd no longer takes the token (it expired, or etcd restarted): a new one is asked for.
  func tokenRefused(_ error: EtcdError) -> Bool {
    guard configuration.credentials != nil, case .rejected(let code, _) = error.kind, code == 16 else {
      return false
    }
    token = nil
    return true
  }

  private func attempt<Answer>(
    _ name: String, _ path: String, _ body: [UInt8], _ mutating: Bool,
    _ read: ((ArraySlice<UInt8>) -> Answer?)?, _ decode: @escaping (JSON) throws(MalformedAnswer) -> Answer,
    _ completion: @escaping (Result<Answer, EtcdError>) -> Void, tried: Int, earlier: [EtcdError.Attempt]
  ) {
    let member = self.member
    let transfer: Transfer
    do {
      transfer = try Transfer(
        multi: multi, url: member + path, request: body, headers: requestHeaders,
        timeout: configuration.requestTimeout,
        configuration: configuration
      ) { [weak self] outcome in
        guard let self else { return }
        guard
          let error = self.error(
            of: outcome, call: name, member: member, mutating: mutating, earlier: earlier)
        else {
          // An answer of the usual shape read from its bytes (`read`), any other parsed.
          if let answer = read?(outcome.body[...]) { return completion(.success(answer)) }
          do {
            return completion(.success(try decode(try JSON.parse(outcome.body))))
          } catch {
            return completion(.failure(EtcdError(.malformed, call: name, member: member, detail: "\(error)")))
          }
        }
        if path != "/v3/auth/authenticate", tried == 0, self.tokenRefused(error) {
          // Refused before anything was done: asked again with a new token, once.
          return self.authorized { [weak self] refusal in
            if let refusal { return completion(.failure(refusal)) }
            self?.attempt(name, path, body, mutating, read, decode, completion, tried: 1, earlier: earlier)
          }
        }
        let retry = [.noLeader, .unavailable, .timedOut].contains(error.kind) && !error.outcomeUnknown
        guard retry, tried + 1 < self.configuration.members.count else {
          // A change the member did not answer in time is not sent again, but the next call
          // (the caller's look at what became of it) goes to the next member: this one may be
          // frozen or cut off.
          if error.outcomeUnknown, error.kind == .timedOut { self.moveOn(from: member) }
          return completion(.failure(error))
        }
        self.moveOn(from: member)
        self.attempt(
          name, path, body, mutating, read, decode, completion, tried: tried + 1,
          earlier: error.earlier + [error.attempt])
      }
    } catch {
      return completion(.failure(error))
    }
    multi.start(transfer)
  }

  /// After a watch failed on `member` for want of a leader or of an answer, the owner's next
  /// watch goes to the next member.
  func moveOn(after error: EtcdError, from member: String) {
    if [.noLeader, .unavailable, .timedOut].contains(error.kind) { moveOn(from: member) }
  }

  /// The next member becomes the current one, unless another call moved on already.
  func moveOn(from member: String) {
    guard self.member == member else { return }
    current = (current + 1) % configuration.members.count
  }

  /// The error a finished transfer stands for, or nil when it brought a 200 answer. `earlier`:
  /// the members this call tried before, each with its own error (never nested in this one's).
  func error(
    of outcome: Transfer.Outcome, call: String, member: String, mutating: Bool, earlier: [EtcdError.Attempt]
  ) -> EtcdError? {
    guard outcome.code == CURLE_OK else {
      let kind: EtcdError.Kind =
        outcome.overLimit
        ? .answerTooLarge : outcome.code == CURLE_OPERATION_TIMEDOUT ? .timedOut : .unavailable
      return EtcdError(
        kind, call: call, member: member, detail: outcome.detail,
        outcomeUnknown: mutating && !outcome.isConnectionRefused, answered: false, earlier: earlier)
    }
    guard outcome.httpStatus != 200 else { return nil }
    guard let json = try? JSON.parse(outcome.body), case .object = json else {
      return EtcdError(
        outcome.httpStatus == 503 ? .unavailable : .rejected(code: 0, httpStatus: outcome.httpStatus),
        call: call, member: member, detail: String(decoding: outcome.body.prefix(200), as: UTF8.self),
        earlier: earlier)
    }
    // The gateway's `message`; a proxy or another server in front of etcd may say `error`.
    let message = (try? json.string("message")) ?? (try? json.string("error")) ?? ""
    return EtcdError.fromGateway(
      code: (try? json.integer("code")) ?? 0, message: message, httpStatus: outcome.httpStatus, call: call,
      member: member, mutating: mutating, earlier: earlier)
  }
}
