import SectionShared

extension EtcdClient {
  /// Opens a watch; `handler` gets its updates in order, on the loop's thread, until one that
  /// ends it (`.compacted`, `.canceled`, `.failed`) or `Watch.cancel()`. A member that cannot
  /// be reached before the watch is in place is skipped for the next, as for a call; after a
  /// watch failed for want of a leader or of an answer, the next watch goes to the next member.
  /// A line for which `skip` returns true (an update the owner recognizes from its text, as
  /// `ValuePrefix` does its own writes) is neither parsed nor handed to `handler`.
  public func watch(
    _ request: WatchRequest, skip: ((ArraySlice<UInt8>) -> Bool)? = nil,
    handler: @escaping (WatchUpdate) -> Void
  ) -> Watch {
    let watch = Watch(handler: handler, skip: skip)
    let body = request.json.serializedBytes()
    authorized { [weak self] error in
      if let error { return watch.deliver(.failed(error)) }
      guard !watch.isOver else { return }
      self?.open(watch, body: body, tried: 0, earlier: [])
    }
    return watch
  }

  private func open(_ watch: Watch, body: [UInt8], tried: Int, earlier: [EtcdError.Attempt]) {
    let member = self.member
    var over = false
    // Each line is one `{"result":…}` (or `{"error":…}` when the stream fails).
    let onLine = { [weak self] (line: ArraySlice<UInt8>) -> Bool in
      if watch.skips(line) {
        watch.started = true
        return true
      }
      let update = Self.watchUpdate(line, member: member)
      watch.started = true
      switch update {
      case .failed(let error):
        over = true
        self?.moveOn(after: error, from: member)
        _ = self?.tokenRefused(error)
      case .compacted, .canceled: over = true
      case .created, .events, .progress: break
      }
      watch.deliver(update)
      return !over
    }
    do {
      watch.transfer = try Transfer(
        multi: multi, url: member + "/v3/watch", request: body, headers: requestHeaders, timeout: 0,
        configuration: configuration, onLine: onLine
      ) { [weak self] outcome in
        guard let self else { return }
        if !watch.started, outcome.isConnectionRefused, tried + 1 < self.configuration.members.count {
          self.moveOn(from: member)
          let refused = EtcdError(
            .unavailable, call: "watch", member: member, detail: outcome.detail, answered: false)
          return self.open(watch, body: body, tried: tried + 1, earlier: earlier + [refused.attempt])
        }
        let error =
          self.error(of: outcome, call: "watch", member: member, mutating: false, earlier: earlier)
          ?? EtcdError(.unavailable, call: "watch", member: member, detail: "the stream ended")
        self.moveOn(after: error, from: member)
        _ = self.tokenRefused(error)
        watch.deliver(.failed(error))
      }
      multi.start(watch.transfer!)
    } catch {
      watch.deliver(.failed(error))
    }
  }

  /// The update in one line of a watch stream: events read straight from the bytes when the
  /// line has the usual shape (`WatchLine`), anything else parsed in full.
  static func watchUpdate(_ line: ArraySlice<UInt8>, member: String) -> WatchUpdate {
    WatchLine.events(in: line) ?? parsedUpdate(line, member: member)
  }

  /// The update in one line of a watch stream, through the JSON tree.
  static func parsedUpdate(_ line: ArraySlice<UInt8>, member: String) -> WatchUpdate {
    do {
      let json = try JSON.parse(line)
      if let result = json["result"] { return try WatchUpdate(result: result) }
      // A stream's error is an object; a watch refused before its stream began has the
      // unary calls' error body (`"error"` a string, `code` and `message` beside it).
      let error = json["error"].map { if case .object = $0 { $0 } else { json } } ?? json
      let code: Int = try error.integer(error == json ? "code" : "grpc_code")
      return .failed(
        EtcdError.fromGateway(
          code: code, message: try error.string("message"), httpStatus: try error.integer("http_code"),
          call: "watch", member: member, mutating: false))
    } catch {
      return .failed(EtcdError(.malformed, call: "watch", member: member, detail: "\(error)"))
    }
  }
}

/// An open watch. Dropping it does not end it: `cancel()` does (or an update that ends it).
public final class Watch {
  var transfer: Transfer?
  var started = false
  private var handler: ((WatchUpdate) -> Void)?
  private let skip: ((ArraySlice<UInt8>) -> Bool)?

  init(handler: @escaping (WatchUpdate) -> Void, skip: ((ArraySlice<UInt8>) -> Bool)?) {
    self.handler = handler
    self.skip = skip
  }

  /// Whether the owner recognizes `line` and wants it neither parsed nor handed over.
  func skips(_ line: ArraySlice<UInt8>) -> Bool { handler != nil && skip?(line) == true }

  /// Cancelled, or ended by an update: nothing more is to be opened for it.
  var isOver: Bool { handler == nil }

  /// Closes the stream; no update comes after. Safe from inside the handler, and twice.
  public func cancel() {
    handler = nil
    transfer?.stop()
    transfer = nil
  }

  func deliver(_ update: WatchUpdate) {
    guard let handler else { return }
    switch update {
    case .compacted, .canceled, .failed:
      self.handler = nil
      transfer = nil
    case .created, .events, .progress: break
    }
    handler(update)
  }
}
