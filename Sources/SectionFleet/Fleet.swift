import Etcd
import Glibc
import Posix
import SectionCore
import SectionServer
import Systemd

/// This host's part in a fleet (`--etcd`): the list's truth is in etcd, and every group commit
/// is one compare-and-swap there before any client hears `OK` (docs/FLEET.md has the design).
///
/// Keys under the prefix `P`: `P head` (`<revision> <snapshot revision> <fleet id>`, the
/// revision every commit compares), `P log/<revision>` (each group, a `FleetEntry`) and
/// `P snapshot` (the whole state at the snapshot revision, for a host that joins or fell
/// behind the log; or, when it is larger than one request, the pointer to its pieces under
/// `P snapshot/`, `FleetSnapshot`). A commit is one txn: compare `head`'s mod revision with the one this host
/// applied last; put the group's entry and the new head. Every other host applies the entry
/// from its watch, as changes of its own, so all have the same revisions, events and history.
///
/// It is the server's `CommitBackend`, and each group ends in one of its outcomes
/// (`Server.finish`): committed (saved here and handed on), retry (the compare failed: another
/// host committed first; the group is undone and its requests run again on the newer state),
/// refused (`ERR UNAVAILABLE`, `ERR LIMIT`); for a txn whose outcome is unknown, the fence
/// finds out which of the first two it was, or, when the log no longer reaches the group,
/// refuses it as of unknown outcome. Other hosts' groups come in through
/// `Server.applyFromElsewhere` and `Server.adopt`.
///
/// The commit is `Fleet+Commit`, the catch-up `Fleet+CatchUp`, joining, the watch and the poll
/// `Fleet+Join`.
package final class Fleet: CommitBackend {
  let options: EtcdOptions
  let client: EtcdClient
  unowned let server: Server
  let headKey: [UInt8]
  let logPrefix: [UInt8]
  /// The snapshot: the state itself, or the pointer to its pieces (`FleetSnapshot`).
  let snapshotKey: [UInt8]
  /// Where the pieces of snapshots are: `P snapshot/`.
  let piecesPrefix: [UInt8]
  /// This process's commit ids: `<boot>.<counter>`, unique across restarts and hosts.
  let boot: String
  var counter: UInt64 = 0

  /// The mod revision in etcd of the head this host applied last: every commit compares it.
  var headRevision: Int64 = 0
  /// The fleet's id (made by the host that seeded it) and the revision of its snapshot.
  var fleetID = ""
  var snapshotRevision: UInt64 = 0
  /// The highest revision a watch event or a read showed: past what is applied, a catch-up is due.
  var seenRevision: UInt64 = 0
  /// This host's last commit, to know it again in the watch without parsing it (`skipsOwn`).
  var ownEntry: OwnEntry?

  struct OwnEntry {
    /// The entry's header (host, commit id) as its value begins.
    let prefix: ValuePrefix
    let revision: UInt64
    let commit: String
  }

  /// Equal when their commit ids are, which are unique: one commit's proposal.
  struct Proposal: Equatable, CustomStringConvertible {
    let commit: String
    /// The revision applied before the group, and the group's own (its last change's).
    let base: UInt64
    let revision: UInt64
    let txn: Txn
    /// The snapshot revision the head names once the group is committed: the group's own when
    /// the txn holds the state, else the one before.
    let snapshot: UInt64
    /// The snapshot to write in pieces once the group is committed (the state too large for
    /// the txn).
    let pieces: PendingSnapshot?
    /// The bytes of the group's entry, which the log holds once it is committed.
    let entryBytes: Int
    /// Past it the group is refused (`ERR UNAVAILABLE`): a change never waits longer.
    let deadline: UInt64
    /// Whether the group is a RELOAD, which replaces the list on every host once committed.
    let reload: Bool

    static func == (a: Proposal, b: Proposal) -> Bool { a.commit == b.commit }
    var description: String { "the commit \(commit) of revision \(revision)" }
  }

  /// Set only by `handle(_:)`, through the phase's transition function (`Fleet+Phase`).
  private(set) var phase = Phase.joining

  /// Applies `event` to the phase: the one place the phase changes. An illegal event is a
  /// mistake in the fleet's code, not in anything etcd or a client sent: it stops the daemon
  /// with both named, rather than leaving a host that waits for an outcome that never comes.
  func handle(_ event: Phase.Event) {
    guard let next = phase.next(on: event) else {
      preconditionFailure("fleet: \(event) is illegal in phase \(phase)")
    }
    phase = next
    // Changes wait (the service is sealed) whenever a commit or a catch-up is under way.
    guard case .idle = next else {
      gate.sealed = true
      return
    }
    gate.sealed = server.stopRequested
  }

  var watch: Watch?
  /// Every `pollInterval`: the head read linearizably, which finds a frozen member or a watch
  /// that went quiet, and catches up what the watch missed.
  var poller: EventSource?
  var retryTimer: EventSource?
  var retryAction: (() -> Void)?
  /// When etcd stopped answering: the host's view is stale since then (nil: current).
  var staleSince: UInt64?
  /// The last failure, for STATUS and the refusals.
  var lastError: String?
  /// A key this host cannot use, and the pause before it is read again (`Fleet+Damage`).
  var damage: Damage?
  var damageDelay: UInt64 = 0
  /// etcd's last error, for the refusal of a change that waited for the join in vain.
  var lastFailure: EtcdError?
  /// Ends the wait of the changes sent before the host joined (`joinBoundPassed`).
  var joinTimer: EventSource?
  /// Whether systemd was told READY=1.
  var announced = false
  /// Whether this host is writing a snapshot in pieces (`Fleet+Snapshot`): one at a time.
  var writingSnapshot = false
  /// The last snapshot this host knows of (written, loaded or seeded): its revision and size,
  /// and the bytes of the log entries this host applied since (`piecesDue`).
  var knownSnapshot: (revision: UInt64, bytes: Int) = (0, 0)
  var logBytesSinceSnapshot = 0
  /// How many log entries the next catch-up read takes: `catchUpPageLimit`, halved for each
  /// answer over the client's limit and doubled back for each read that fits.
  var catchUpPage: Int64 = 1
  /// etcd refused this host's last write for want of space (its NOSPACE alarm), and no write
  /// succeeded since: etcd answers, so the host is not stale, but changes are refused until an
  /// operator frees room (`Fleet+Space`). The refusal's text, which STATUS's `fleet-error`
  /// shows meanwhile.
  var outOfSpace: String?
  /// Whether changes may be made now, and whether the unsaved ones are sealed (`handle(_:)`):
  /// the service reads it at each change.
  package let gate = ChangeGate()
  /// Whose config the list this host serves comes from, for STATUS's `fleet-config`: a RELOAD
  /// on any host replaces the list on every host, so each host must say whether its own
  /// config file is the one in use.
  var listSource = "not known until this host has joined the fleet"

  /// A change waits at most this long for etcd: then `ERR UNAVAILABLE`. The bound a client
  /// is promised, and the fleet suites check, is 10 s (docs/FLEET.md, "Failures"): the other
  /// 2 s are for the wait before the commit begins (the group before it, a catch-up) and a
  /// loaded machine.
  static let commitTimeout: UInt64 = 8_000_000
  /// One attempt on one member: a member that lost its leader says so at once (the has-leader
  /// header), so this bounds only a member frozen, cut off, or whose leader just died (a txn
  /// forwarded to it hangs until etcd's own 7 s). A commit takes milliseconds, 10-20 under a
  /// 50-client flood (bench/fleet_bench.py); 2 s is far above that, and with the leader
  /// SIGKILLed a host's first OK came 3.1-3.7 s after the kill with 3 s here, against etcd's
  /// own 1.3 s (fleet-faults leader-kill). Three attempts and their pauses fit in
  /// `commitTimeout`.
  static let attemptTimeout: UInt64 = 2_000_000
  /// The most bytes of one group's entry: etcd takes requests up to 1.5 MiB; the rest is the
  /// head, the keys, base64's third and the JSON around them.
  static let entryLimit = 1 << 20
  static let pollInterval: UInt64 = 2_000_000
  /// A new snapshot is written with the group that is this many past the last one, and the log
  /// before it deleted, so the fleet's keys stay bounded.
  static let snapshotEvery: UInt64 = 1000
  /// The most bytes of one piece of a snapshot: one put each, well under etcd's request
  /// limit. Pieces of 1 MiB timed out (`attemptTimeout`) on a loaded 2-core machine with a
  /// debug build, puts of half that did not.
  static let pieceSize = 512 << 10
  /// How many pieces one read takes: an answer of at most 1 MiB.
  static let piecesPerRead: Int64 = 2
  /// How many times a piece's put, or a read of pieces, is sent before the snapshot is given
  /// up (a put sends the same key and value again: harmless).
  static let pieceAttempts = 3
  /// A snapshot in pieces is written once the log since the last one holds at least
  /// 1/`piecesLogShare` of the state's size (`piecesDue`): the snapshots then cost etcd at most
  /// twice the log's own bytes.
  static let piecesLogShare = 2
  /// ... or once this many revisions passed, however small the changes: it bounds the log's
  /// keys (a TOGGLE's entry is about 150 bytes, so half of a 54 MB state would be 180,000 of
  /// them), and so what a host behind reads entry by entry.
  static let piecesEveryAtMost: UInt64 = 100_000
  /// What STATUS and the log say on a host whose own config file is not the list's.
  static let configUnused = "this host's config is not used"
  /// The most bytes one log entry can take in the gateway's answer to a range: etcd takes no
  /// request over its `--max-request-bytes` (1.5 MiB by default), so no value it holds is
  /// larger, whoever wrote it; base64 adds a third, the key and the revisions around it the rest.
  static let largestEntryAnswer = (3 << 19) / 3 * 4 + 1024
  /// How many log entries one catch-up read takes at most: as many of the largest entries etcd
  /// holds as half the client's answer limit has room for (15 with the defaults). A count that
  /// ignores their size (64 entries of 1 MiB are 90 MB in the answer) left a host behind a log
  /// of large entries unable to read it at all. A page over the limit all the same (a cluster
  /// whose members take larger requests) is read again in halves (`catchUpPage`).
  var catchUpPageLimit: Int64 {
    max(1, Int64(client.configuration.maximumAnswerBytes / 2 / Fleet.largestEntryAnswer))
  }

  /// The client's limit on one answer, in bytes, when not the default 64 MiB: a lower one
  /// makes a few large log entries pass it, so that a test of the catch-up's pages need not
  /// write a hundred megabytes into etcd first. At least 4 MiB: two of the largest entries
  /// etcd holds (`largestEntryAnswer`), so that a page of one always fits.
  static let answerLimitVariable = "SECTIOND_ETCD_ANSWER_LIMIT"
  static let answerLimits = (4 << 20)...(64 << 20)

  static func answerLimit(_ value: UnsafePointer<CChar>?) throws(StartFailure) -> Int {
    guard let value else { return answerLimits.upperBound }
    let text = Array(String(cString: value).utf8)
    guard let bytes = RequestParser.revision(text[...]).flatMap({ Int(exactly: $0) }),
      answerLimits.contains(bytes)
    else {
      throw StartFailure(
        "\(answerLimitVariable) is not a number of bytes from \(answerLimits.lowerBound) to \(answerLimits.upperBound): unset it for the default, \(answerLimits.upperBound)"
      )
    }
    return bytes
  }

  package init(options: EtcdOptions, server: Server) throws {
    self.options = options
    self.server = server
    let tls = options.caFile.map {
      EtcdClient.TLSFiles(
        certificateAuthority: $0, certificate: options.certificateFile, key: options.keyFile)
    }
    let answerLimit = try Fleet.answerLimit(getenv(Fleet.answerLimitVariable))
    let credentials = try options.credentials ?? options.credentialsFile.map(EtcdOptions.credentials(in:))
    if credentials != nil {
      // The password stays in memory for the life of the process (a new token is asked for
      // whenever etcd drops the old one): no core file or same-user tracer may read it.
      do { try ProcessInfo.forbidDumps() } catch { throw StartFailure("--etcd: \(error)", errno: nil) }
      let clear = options.members.filter { $0.hasPrefix("http://") }
      if !clear.isEmpty {
        Log.warning(
          "fleet: etcd's password goes in clear to \(clear.joined(separator: ", ")): anyone who can watch that traffic, or bind a member's port while the member is down, reads it; use https:// members with --etcd-cacert"
        )
      }
    }
    do {
      client = try EtcdClient(
        loop: server.loop,
        configuration: EtcdClient.Configuration(
          members: options.members, requestTimeout: Int(Fleet.attemptTimeout / 1000),
          maximumAnswerBytes: answerLimit, tls: tls,
          credentials: credentials.map { EtcdClient.Credentials(user: $0.user, password: $0.password) }))
    } catch {
      throw StartFailure("--etcd: \(error)", errno: nil)
    }
    let prefix = Array(options.prefix.utf8)
    headKey = prefix + Array("head".utf8)
    logPrefix = prefix + Array("log/".utf8)
    snapshotKey = prefix + Array("snapshot".utf8)
    piecesPrefix = prefix + Array("snapshot/".utf8)
    boot = String(UInt64.random(in: 1...UInt64.max), radix: 36)
    catchUpPage = catchUpPageLimit
  }

  // MARK: What the server asks

  /// Whether changes must wait: a commit or a catch-up is under way.
  package var isBusy: Bool {
    if case .idle = phase { return false }
    return true
  }

  var member: String { client.member }

  /// The revision of the list this host holds: its model's, a group under way included. The
  /// fleet reads the list's state through this and `savedRevision` alone.
  var appliedRevision: UInt64 { server.service.model.revision }

  /// The revision reads are served from once a group under way is refused (the refusal undoes
  /// it): the last saved. What the refusals name.
  var savedRevision: UInt64 { server.service.savedRevision }

  /// Whether a group's commit is under way: clients wait for its outcome.
  package var isCommitting: Bool {
    if case .committing = phase { return true }
    return false
  }

  /// Whether another host's group may be applied now: nothing under way, and no unsaved
  /// changes of this host's (requests released at the end of a turn make some, which the next
  /// turn sends: a catch-up waits for their outcome).
  /// While a key is damaged, only its retry reads the log.
  var canApply: Bool { !isBusy && !server.service.hasUnsavedChanges && damage == nil }

  /// STATUS's fleet lines: this host, what it does (`refusing`: it serves reads but refuses
  /// changes, `fleet-error` says why; `no-space`: so, because etcd is out of space, although
  /// it answers), the member in use, the revision applied, since when
  /// (seconds) etcd has not answered (`-`: it answers), and whose config the list is.
  package var statusFields: [(String, String)] {
    let stale = staleSince.map { String((monotonicMicroseconds() - $0) / 1_000_000) } ?? "-"
    let state =
      switch phase {
      case .joining: "joining"
      case .idle where outOfSpace != nil: "no-space"
      case .idle: gate.refusal == nil ? "serving" : "refusing"
      case .committing: "committing"
      case .catchingUp: "catching-up"
      }
    var fields = [
      ("fleet-host", options.host), ("fleet-prefix", options.prefix),
      // The head's text, from etcd: one printable word.
      ("fleet-id", fleetID.isEmpty ? "-" : VisibleText.line(fleetID, limit: 64)),
      ("fleet-state", state), ("fleet-member", member),
      ("fleet-revision", String(appliedRevision)),
      (
        "fleet-behind",
        String(
          seenRevision > appliedRevision ? seenRevision - appliedRevision : 0)
      ),
      ("fleet-stale-since", stale), ("fleet-config", listSource),
    ]
    if let error = lastError ?? outOfSpace ?? damage.map({ "\($0.key) \($0.problem)" }) {
      fields.append(("fleet-error", VisibleText.escape(error)))
    }
    return fields
  }

  /// Begins: reads the head, then seeds the fleet or adopts its list; watches and polls.
  /// Changes wait for the join as for a commit (the service is sealed), within the same bound
  /// (`joinBoundPassed`); systemd hears READY=1 once the host has joined (`announceReady`).
  package func start() throws -> Bool {
    handle(.join)
    joinTimer = try server.loop.timer(after: Fleet.commitTimeout) { [unowned self] in joinBoundPassed() }
    poller = try server.loop.timer(after: Fleet.pollInterval) { [unowned self] in self.poll() }
    retryTimer = try server.loop.timer(after: 1 << 40) { [unowned self] in
      let action = self.retryAction
      self.retryAction = nil
      action?()
    }
    retryTimer?.setEnabled(false)
    join()
    return false
  }

  package func stop() {
    joinTimer?.cancel()
    watch?.cancel()
    watch = nil
    poller?.cancel()
    retryTimer?.cancel()
  }

  /// A group may be retried: another host committed first.
  package var retries: Bool { true }

  /// Sends the turn's group as one txn; its outcome comes later. Refused at once when it
  /// cannot be sent at all.
  package func commit(_ group: SavedGroup, of service: SectionService) -> CommitOutcome? {
    if let refusal = gate.refusal { return refused(refusal) }
    counter += 1
    let commit = "\(boot).\(counter)"
    let entry = FleetEntry.encode(
      group, host: options.host, commit: commit, state: service.encodeState(into:))
    guard entry.count <= Fleet.entryLimit else {
      if group.needsSnapshot {
        // A reload travels as the whole state in one entry, the history with it, which every
        // host applies from its watch in the order of the log (docs/FLEET.md, "Limits").
        return refused(
          ProtocolError(
            .limit,
            "the reloaded list with the history takes \(entry.count) bytes in the fleet; a RELOAD in a fleet takes at most \(Fleet.entryLimit) (etcd's request limit, docs/FLEET.md): nothing was applied; edit the list with requests instead, or seed a new prefix with it"
          ))
      }
      return refused(
        ProtocolError(
          .limit,
          "the group's changes take \(entry.count) bytes in the fleet; at most \(Fleet.entryLimit) (etcd's request limit, docs/FLEET.md): nothing was applied; send fewer changes at once"
        ))
    }
    ownEntry = OwnEntry(
      prefix: ValuePrefix(of: entry, count: (entry.firstIndex(of: 0x0A) ?? entry.count) + 1),
      revision: group.revision, commit: commit)
    var success: [Operation] = []
    success.reserveCapacity(5)  // grown one by one, the array was reallocated on every commit
    success.append(.put(key: logKey(group.revision), value: entry))
    var snapshot = snapshotRevision
    var pieces: PendingSnapshot?
    let base = (group.changes.first?.revision ?? group.revision + 1) - 1
    // A snapshot with the group that crosses a multiple of `snapshotEvery` (every host knows
    // which, from the revisions alone), and with a reload's.
    // (Not even encoded when its text alone is too large for the txn and a snapshot in pieces
    // is not due: the state is at least its text.)
    let text = service.model.textBytes
    if group.revision / Fleet.snapshotEvery > base / Fleet.snapshotEvery
      && (text <= Fleet.entryLimit || piecesDue(group.revision, bytes: text)) || group.needsSnapshot
    {
      var state: [UInt8] = []
      service.encodeState(into: &state)
      if state.count <= Fleet.entryLimit - entry.count {
        // It fits this txn: the state itself in `P snapshot`, as hosts before pieces wrote it.
        snapshot = group.revision
        success.append(.put(key: snapshotKey, value: state))
        // The log before the previous snapshot goes: a host up to `snapshotEvery` behind still
        // catches up from the log, without the whole state. So do pieces, now nobody's.
        success.append(.delete(key: logKey(0), rangeEnd: logKey(snapshotRevision)))
        success.append(.delete(key: piecesPrefix, rangeEnd: RangeRequest.prefixEnd(piecesPrefix)))
      } else if !writingSnapshot, piecesDue(group.revision, bytes: state.count) {
        // In pieces once committed (`writeSnapshot`); this txn reads the pointer it replaces.
        pieces = pendingSnapshot(state, revision: group.revision)
      }
    }
    success.append(.put(key: headKey, value: headValue(group.revision, snapshot: snapshot)))
    if pieces != nil { success.append(.range(RangeRequest(key: snapshotKey))) }
    // The head this host applied, and no entry at the group's revision yet: the head alone
    // decides, and the second compare makes sure that a mistake in following it can only
    // fail a commit, never put this group over another host's entry.
    let txn = Txn(
      compare: [
        Compare(key: headKey, .modRevision(headRevision)),
        Compare(key: logKey(group.revision), .createRevision(0)),
      ], success: success)
    let proposal = Proposal(
      commit: commit, base: base, revision: group.revision, txn: txn, snapshot: snapshot, pieces: pieces,
      entryBytes: entry.count,
      deadline: monotonicMicroseconds() + Fleet.commitTimeout, reload: group.needsSnapshot)
    handle(.propose(proposal))
    send(proposal)
    return nil
  }

  // MARK: Keys and values

  /// `log/` and the revision in 20 digits (all a UInt64 takes), zero-padded so that the keys
  /// sort as the revisions do. Written digit by digit: one a commit, and through Strings it
  /// was 3% of a host's instructions a TOGGLE.
  func logKey(_ revision: UInt64) -> [UInt8] {
    var key = logPrefix + repeatElement(UInt8(ascii: "0"), count: 20)
    var rest = revision
    var index = key.count
    while rest > 0 {
      index -= 1
      key[index] = UInt8(ascii: "0") + UInt8(rest % 10)
      rest /= 10
    }
    return key
  }

  /// The revision a log key names; nil for any other key. Read from the bytes: every host
  /// reads every commit's key, and through a String it was 2,200 instructions of a host's
  /// 52,000 applying a TOGGLE.
  func logRevision(_ key: [UInt8]) -> UInt64? {
    guard key.count == logPrefix.count + 20, key.starts(with: logPrefix) else { return nil }
    return RequestParser.revision(key[logPrefix.count...])
  }

  func headValue(_ revision: UInt64, snapshot: UInt64) -> [UInt8] {
    Array("\(revision) \(snapshot) \(fleetID)".utf8)
  }

  /// The head's revision, snapshot revision and fleet id; nil unless it is exactly that: the
  /// id (base 36) is shown and compared, the revisions within what a list can reach, the
  /// snapshot's not past the head's.
  func parseHead(_ value: [UInt8]) -> (UInt64, UInt64, String)? {
    let words = value.split(separator: UInt8(ascii: " "), omittingEmptySubsequences: false)
    guard words.count == 3, let revision = RequestParser.revision(words[0]),
      let snapshot = RequestParser.revision(words[1]), revision <= SectionModel.maxRevision,
      snapshot <= revision,
      !words[2].isEmpty, words[2].count <= 16,
      words[2].allSatisfy({ (0x30...0x39).contains($0) || (0x61...0x7A).contains($0) })
    else { return nil }
    return (revision, snapshot, String(decoding: words[2], as: UTF8.self))
  }
}
