import CCurl

/// One HTTP POST through libcurl's easy handle: the request body, the headers, the time
/// allowed; the response collected whole (a unary call) or handed over line by line as it
/// comes (a watch stream, one JSON object a line).
final class Transfer {
  /// How a transfer ended: libcurl's result, the HTTP status (0 when none came), the body
  /// (what was left after the last complete line, for a stream).
  struct Outcome {
    let code: CURLcode
    let httpStatus: Int
    let body: [UInt8]
    /// libcurl's words for `code`, or what went wrong before curl had the transfer.
    let detail: String
    /// The answer grew past the client's limit (`maximumAnswerBytes`) and was cut off.
    let overLimit: Bool
    /// The request never left: no connection, no TLS session (a certificate refused), or a
    /// URL that is not http or https.
    var isConnectionRefused: Bool {
      [
        CURLE_COULDNT_CONNECT, CURLE_COULDNT_RESOLVE_HOST, CURLE_SSL_CONNECT_ERROR,
        CURLE_PEER_FAILED_VERIFICATION, CURLE_UNSUPPORTED_PROTOCOL,
      ]
      .contains(code)
    }
  }

  let easy: UnsafeMutableRawPointer
  /// Kept while curl may read it: the transfer's own reference, for a list the client
  /// replaces (a new token) while this transfer is under way.
  private let headers: HeaderList
  private var body: [UInt8] = []
  private let limit: Int
  /// A stream's line handler: returns false to end the stream.
  private let onLine: ((ArraySlice<UInt8>) -> Bool)?
  private var completion: ((Outcome) -> Void)?
  /// Set when the stream was ended from our side: its completion does not run.
  private(set) var stopped = false
  private var delivering = false
  private var overLimit = false
  /// Weak: a watch may be cancelled after its client (and the multi handle) went away.
  private weak var multi: CurlMulti?

  /// A POST of `request` to `url`. `timeout` bounds the whole transfer in milliseconds (0: no
  /// bound, for a watch); the client's configuration gives the time to connect, the most kept
  /// of the response (or of one line) and the TLS files.
  init(
    multi: CurlMulti, url: String, request: [UInt8], headers: HeaderList, timeout: Int,
    configuration: EtcdClient.Configuration, onLine: ((ArraySlice<UInt8>) -> Bool)? = nil,
    completion: @escaping (Outcome) -> Void
  ) throws(EtcdError) {
    guard let (easy, fresh) = multi.easyHandle() else {
      throw EtcdError(.library, call: "curl_easy_init", member: url, detail: "out of memory")
    }
    self.easy = easy
    self.multi = multi
    self.limit = configuration.maximumAnswerBytes
    self.onLine = onLine
    self.completion = completion
    self.headers = headers
    if fresh { Self.configure(easy, configuration) }
    // The handle may have served another transfer (a watch, a unary call) and keeps every
    // option it was given then (`CurlMulti.idle`). So every option that differs between
    // transfers is set here, on every use, whatever the kind of call; the ones that are the
    // same for all of them are set once, in `configure`, since a handle never leaves its
    // client's multi handle. An option one kind of transfer needs must be set, or set back,
    // by every transfer (`aHandleThatServedAWatchServesAPutAsAFreshOne`). While idle, the
    // handle still points at the last transfer's header list and write target: curl reads
    // neither until the next transfer sets them again.
    ccurl_easy_setopt_string(easy, CURLOPT_URL, url)
    ccurl_easy_setopt_slist(easy, CURLOPT_HTTPHEADER, headers.list)
    ccurl_easy_setopt_long(easy, CURLOPT_POSTFIELDSIZE, request.count)
    request.withUnsafeBytes { bytes in
      _ = ccurl_easy_setopt_pointer(
        easy, CURLOPT_COPYPOSTFIELDS, UnsafeMutableRawPointer(mutating: bytes.baseAddress))
    }
    ccurl_easy_setopt_long(easy, CURLOPT_TIMEOUT_MS, timeout)
    ccurl_easy_setopt_pointer(easy, CURLOPT_WRITEDATA, Unmanaged.passUnretained(self).toOpaque())
  }

  /// The options every transfer of the client has alike, given to a handle once when it is
  /// made: setting them again on each use (with the header list made for each call) cost a
  /// fleet host's commit 3,500 instructions of its 180k.
  private static func configure(_ easy: UnsafeMutableRawPointer, _ configuration: EtcdClient.Configuration) {
    // The members are reached directly: a proxy named in the environment (http_proxy,
    // all_proxy) would see the credentials and every change, and looking for one is six
    // getenv calls a request.
    ccurl_easy_setopt_string(easy, CURLOPT_PROXY, "")
    // A member is http or https: never a file:// or any other of curl's schemes.
    ccurl_easy_setopt_string(easy, CURLOPT_PROTOCOLS_STR, "http,https")
    ccurl_easy_setopt_long(easy, CURLOPT_NOSIGNAL, 1)
    ccurl_easy_setopt_long(easy, CURLOPT_CONNECTTIMEOUT_MS, configuration.connectTimeout)
    if let tls = configuration.tls {
      ccurl_easy_setopt_string(easy, CURLOPT_CAINFO, tls.certificateAuthority)
      if let certificate = tls.certificate { ccurl_easy_setopt_string(easy, CURLOPT_SSLCERT, certificate) }
      if let key = tls.key { ccurl_easy_setopt_string(easy, CURLOPT_SSLKEY, key) }
    }
    ccurl_easy_setopt_write(easy, CURLOPT_WRITEFUNCTION, writeThunk)
  }

  deinit {
    // Over: curl no longer has the handle (a transfer in the multi handle is kept alive by it).
    if let multi { multi.recycle(easy) } else { ccurl_easy_cleanup(easy) }
  }

  /// Ends a stream from our side; its completion does not run. From inside the stream's
  /// line handler the transfer ends when the handler returns.
  func stop() {
    guard !stopped else { return }
    stopped = true
    completion = nil
    if !delivering { multi?.cancel(self) }
  }

  /// What curl wrote: kept, or cut into lines for the stream's handler. False stops curl.
  fileprivate func receive(_ bytes: UnsafeRawBufferPointer) -> Bool {
    guard !stopped else { return false }
    // What is already here holds no newline (each call takes its lines out): only the new
    // bytes are searched, so that a long line (a group of 1 MiB in a watch event, in pieces
    // of a few KiB) costs its length once, not once for every piece.
    var searchFrom = body.count
    body.append(contentsOf: bytes)
    guard let onLine else {
      overLimit = body.count > limit
      return !overLimit
    }
    multi?.handedOver = true
    delivering = true
    defer { delivering = false }
    var start = body.startIndex
    while !stopped, let newline = body[searchFrom...].firstIndex(of: 0x0A) {
      let line = body[start..<newline]
      start = newline + 1
      searchFrom = start
      if !line.allSatisfy({ $0 == 0x20 || $0 == 0x0D }) && !onLine(line) { stopped = true }
    }
    body.removeSubrange(..<start)
    overLimit = body.count > limit
    if stopped { completion = nil }
    return !stopped && !overLimit
  }

  /// Called by the multi handle once curl is done (or could not start): runs the completion.
  func finish(_ code: CURLcode, detail: String?) {
    // A stream's last line may come without its newline (the gateway's `{"error":…}`).
    if let onLine, !body.isEmpty, !overLimit, !stopped {
      let line = body[...]
      body = []
      if !onLine(line) { stop() }
    }
    guard let completion else { return }
    self.completion = nil
    var status = 0
    ccurl_easy_getinfo_long(easy, CURLINFO_RESPONSE_CODE, &status)
    let text =
      overLimit
      ? "the answer is over the client's limit of \(limit) bytes"
      : detail ?? String(cString: ccurl_easy_strerror(code))
    completion(Outcome(code: code, httpStatus: status, body: body, detail: text, overLimit: overLimit))
  }
}

private let writeThunk: curl_write_callback = { data, size, count, userdata in
  let transfer = Unmanaged<Transfer>.fromOpaque(userdata!).takeUnretainedValue()
  let total = size * count
  return transfer.receive(UnsafeRawBufferPointer(start: data, count: total)) ? total : 0
}

/// A request's headers as curl takes them: made once for the client's calls (again when its
/// token changes), not for each call, and freed when the last transfer using it is over.
final class HeaderList {
  let list: UnsafeMutablePointer<curl_slist>?

  init(_ headers: [String]) {
    var list: UnsafeMutablePointer<curl_slist>?
    for header in headers { list = ccurl_slist_append(list, header) }
    self.list = list
  }

  deinit { ccurl_slist_free_all(list) }
}
