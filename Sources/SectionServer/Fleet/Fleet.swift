import Etcd
import Glibc
import Posix
import SectionCore
import Systemd

/// This host's part in a fleet (`--etcd`): the list's truth is in etcd, and every group commit
/// is one compare-and-swap there before any client hears `OK` (docs/FLEET.md has the design).
///
/// Keys under the prefix `P`: `P head` (`<revision> <snapshot revision> <fleet id>`, the
/// revision every commit compares), `P log/<revision>` (each group, a `FleetEntry`) and
/// `P snapshot` (the whole state at the snapshot revision, for a host that joins or fell
/// behind the log). A commit is one txn: compare `head`'s mod revision with the one this host
/// applied last; put the group's entry and the new head. Every other host applies the entry
/// from its watch, as changes of its own, so all have the same revisions, events and history.
///
/// The server sees four outcomes of a commit (`Server+Fleet`): committed (saved here and
/// handed on), retried (the compare failed: another host committed first; the group is undone
/// and its requests run again on the newer state), refused (`ERR UNAVAILABLE`, `ERR LIMIT`),
/// and, for a txn whose outcome is unknown, the fence finds out which of the first two it was.
final class Fleet {
  let options: FleetOptions
  let client: EtcdClient
  unowned let server: Server
  private let headKey: [UInt8]
  private let logPrefix: [UInt8]
  private let snapshotKey: [UInt8]
  /// This process's commit ids: `<boot>.<counter>`, unique across restarts and hosts.
  private let boot: String
  private var counter: UInt64 = 0

  /// The mod revision in etcd of the head this host applied last: every commit compares it.
  private var headRevision: Int64 = 0
  /// The fleet's id (made by the host that seeded it) and the revision of its snapshot.
  private var fleetID = ""
  private var snapshotRevision: UInt64 = 0
  /// The highest revision a watch event or a read showed: past what is applied, a catch-up is due.
  private var seenRevision: UInt64 = 0

  private enum Phase {
    /// Reading the head, seeding or adopting the fleet's list: changes are refused.
    case joining
    case idle
    /// A group's txn (or the fence after one whose outcome is unknown) is under way.
    case committing(Proposal)
    /// Reading and applying what other hosts committed.
    case catchingUp
  }

  private struct Proposal {
    let commit: String
    /// The revision applied before the group, and the group's own (its last change's).
    let base: UInt64
    let revision: UInt64
    let txn: Txn
    /// Past it the group is refused (`ERR UNAVAILABLE`): a change never waits longer.
    let deadline: UInt64
  }

  /// Changes wait (the service is sealed) whenever a commit or a catch-up is under way.
  private var phase = Phase.joining {
    didSet {
      guard case .idle = phase else {
        server.service.sealed = true
        return
      }
      server.service.sealed = false
    }
  }
  private var watch: Watch?
  /// Every `pollInterval`: the head read linearizably, which finds a frozen member or a watch
  /// that went quiet, and catches up what the watch missed.
  private var poller: EventSource?
  private var retryTimer: EventSource?
  private var retryAction: (() -> Void)?
  /// When etcd last answered; when the host's view became stale (nil: current).
  private(set) var lastContact: UInt64 = 0
  private(set) var staleSince: UInt64?
  /// The last failure, for STATUS and the refusals.
  private(set) var lastError: String?
  /// A SIGHUP came while a commit was under way: reload once it is through.
  var reloadWhenIdle = false

  /// A change waits at most this long for etcd: then `ERR UNAVAILABLE` (issue 46: within 10 s,
  /// with room for a loaded machine).
  static let commitTimeout: UInt64 = 8_000_000
  /// One attempt on one member: a member that lost its leader says so at once (the has-leader
  /// header), so this bounds only a frozen or cut-off member; two attempts and a pause fit in
  /// `commitTimeout`, so a frozen member costs a change one attempt before the next member.
  static let attemptTimeout: UInt64 = 3_000_000
  /// The most bytes of one group's entry: etcd takes requests up to 1.5 MiB; the rest is the
  /// head, the keys, base64's third and the JSON around them.
  static let entryLimit = 1 << 20
  static let pollInterval: UInt64 = 2_000_000
  /// A new snapshot is written with the group that is this many past the last one, and the log
  /// before it deleted, so the fleet's keys stay bounded.
  static let snapshotEvery: UInt64 = 1000
  /// How many log entries one catch-up read takes.
  static let catchUpBatch: Int64 = 64

  init(options: FleetOptions, server: Server) throws {
    self.options = options
    self.server = server
    let tls = options.caFile.map {
      EtcdClient.TLSFiles(
        certificateAuthority: $0, certificate: options.certificateFile, key: options.keyFile)
    }
    let credentials = try options.credentials ?? options.credentialsFile.map(FleetOptions.credentials(in:))
    do {
      client = try EtcdClient(
        loop: server.loop,
        configuration: EtcdClient.Configuration(
          members: options.members, requestTimeout: Int(Fleet.attemptTimeout / 1000), tls: tls,
          credentials: credentials.map { EtcdClient.Credentials(user: $0.user, password: $0.password) }))
    } catch {
      throw StartFailure("--etcd: \(error)", errno: nil)
    }
    let prefix = Array(options.prefix.utf8)
    headKey = prefix + Array("head".utf8)
    logPrefix = prefix + Array("log/".utf8)
    snapshotKey = prefix + Array("snapshot".utf8)
    boot = String(UInt64.random(in: 1...UInt64.max), radix: 36)
  }

  // MARK: What the server asks

  /// Whether changes must wait: a commit or a catch-up is under way.
  var isBusy: Bool {
    if case .idle = phase { return false }
    return true
  }

  var member: String { client.member }

  /// Whether another host's group may be applied now: nothing under way, and no unsaved
  /// changes of this host's (requests released at the end of a turn make some, which the next
  /// turn sends: a catch-up waits for their outcome).
  private var canApply: Bool { !isBusy && !server.service.hasUnsavedChanges }

  /// STATUS's fleet lines: this host, the member in use, the revision applied, and since when
  /// (seconds) etcd has not answered (`-`: it answers).
  var statusFields: [(String, String)] {
    let stale = staleSince.map { String((monotonicMicroseconds() - $0) / 1_000_000) } ?? "-"
    let state =
      switch phase {
      case .joining: "joining"
      case .idle: "serving"
      case .committing: "committing"
      case .catchingUp: "catching-up"
      }
    var fields = [
      ("fleet-host", options.host), ("fleet-state", state), ("fleet-member", member),
      ("fleet-revision", String(server.service.model.revision)),
      (
        "fleet-behind",
        String(
          seenRevision > server.service.model.revision ? seenRevision - server.service.model.revision : 0)
      ),
      ("fleet-stale-since", stale),
    ]
    if let lastError { fields.append(("fleet-error", String(lastError.map { $0 == "\n" ? " " : $0 }))) }
    return fields
  }

  /// Begins: reads the head, then seeds the fleet or adopts its list; watches and polls.
  func start() throws {
    server.service.changeRefusal = ProtocolError(.unavailable, "not joined to the fleet yet (etcd \(member))")
    poller = try server.loop.timer(after: Fleet.pollInterval) { [unowned self] in self.poll() }
    retryTimer = try server.loop.timer(after: 1 << 40) { [unowned self] in
      let action = self.retryAction
      self.retryAction = nil
      action?()
    }
    retryTimer?.setEnabled(false)
    join()
  }

  func stop() {
    watch?.cancel()
    watch = nil
    poller?.cancel()
    retryTimer?.cancel()
  }

  /// Sends the turn's group as one txn. Returns the refusal when it cannot be sent at all.
  func commit(_ group: SavedGroup) -> ProtocolError? {
    if let refusal = server.service.changeRefusal { return refusal }
    counter += 1
    let commit = "\(boot).\(counter)"
    let entry = FleetEntry.encode(
      group, host: options.host, commit: commit, state: server.service.encodeState(into:))
    guard entry.count <= Fleet.entryLimit else {
      return ProtocolError(
        .limit,
        "the group's changes take \(entry.count) bytes in the fleet; at most \(Fleet.entryLimit) (etcd's request limit, docs/FLEET.md): nothing was applied; send fewer changes at once"
      )
    }
    var success: [Operation] = [.put(key: logKey(group.revision), value: entry)]
    var snapshot = snapshotRevision
    if group.revision >= snapshotRevision + Fleet.snapshotEvery || group.needsSnapshot {
      var state: [UInt8] = []
      server.service.encodeState(into: &state)
      if state.count <= Fleet.entryLimit - entry.count {
        snapshot = group.revision
        success.append(.put(key: snapshotKey, value: state))
        // The log before the previous snapshot goes: a host up to `snapshotEvery` behind still
        // catches up from the log, without the whole state.
        success.append(.delete(key: logKey(0), rangeEnd: logKey(snapshotRevision)))
      }
    }
    success.append(.put(key: headKey, value: headValue(group.revision, snapshot: snapshot)))
    let txn = Txn(compare: [Compare(key: headKey, .modRevision(headRevision))], success: success)
    let proposal = Proposal(
      commit: commit, base: (group.changes.first?.revision ?? group.revision + 1) - 1,
      revision: group.revision,
      txn: txn, deadline: monotonicMicroseconds() + Fleet.commitTimeout)
    phase = .committing(proposal)
    send(proposal, snapshot: snapshot)
    return nil
  }

  // MARK: Committing

  private func send(_ proposal: Proposal, snapshot: UInt64) {
    client.txn(proposal.txn) { [unowned self] result in
      switch result {
      case .success(let answer) where answer.succeeded:
        contact()
        headRevision = answer.header.revision
        snapshotRevision = snapshot
        phase = .idle
        server.fleetCommitted()
        catchUpIfBehind()
      case .success:
        contact()
        phase = .idle
        server.fleetRetry()
        catchUp()
      case .failure(let error) where error.kind == .tooLarge:
        contact()
        phase = .idle
        server.fleetRefused(
          ProtocolError(.limit, "etcd refused the group as too large (\(error.detail)); nothing was applied"))
      case .failure(let error) where error.outcomeUnknown:
        failed(error)
        fence(proposal, snapshot: snapshot)
      case .failure(let error):
        failed(error)
        retry(proposal, because: error) { [unowned self] in send(proposal, snapshot: snapshot) }
      }
    }
  }

  /// After a txn whose outcome is unknown: re-puts the head under the same compare. If that
  /// succeeds the earlier txn can never commit any more (the head it compared has moved), so
  /// the group is run again; if the compare fails, the head moved, and the catch-up finds
  /// whether the group is the entry after ours (`apply`).
  private func fence(_ proposal: Proposal, snapshot: UInt64) {
    let txn = Txn(
      compare: [Compare(key: headKey, .modRevision(headRevision))],
      success: [.put(key: headKey, value: headValue(proposal.base, snapshot: snapshotRevision))])
    client.txn(txn) { [unowned self] result in
      switch result {
      case .success(let answer) where answer.succeeded:
        contact()
        headRevision = answer.header.revision
        phase = .idle
        server.fleetRetry()
      case .success:
        contact()
        // The head moved: ours, or another host's. `apply` tells them apart by the commit id.
        phase = .committing(proposal)
        catchUp(after: proposal)
      case .failure(let error):
        failed(error)
        retry(proposal, because: error, mayBeApplied: true) { [unowned self] in
          fence(proposal, snapshot: snapshot)
        }
      }
    }
  }

  private func retry(
    _ proposal: Proposal, because error: EtcdError, mayBeApplied: Bool = false, _ again: @escaping () -> Void
  ) {
    // Only an attempt that can end before the deadline: a change is never held past it.
    guard monotonicMicroseconds() + Fleet.retryDelay + Fleet.attemptTimeout < proposal.deadline else {
      phase = .idle
      // The error says itself when its own outcome is unknown.
      let note =
        error.outcomeUnknown
        ? ""
        : mayBeApplied
          ? "; the change may still be applied (its outcome is unknown)" : "; nothing was applied"
      server.fleetRefused(ProtocolError(.unavailable, "etcd: \(error)" + note))
      server.service.changeRefusal = unavailable(error)
      return
    }
    later(again)
  }

  static let retryDelay: UInt64 = 250_000

  private func later(_ action: @escaping () -> Void) {
    retryAction = action
    retryTimer?.rearm(after: Fleet.retryDelay)
    retryTimer?.setEnabled(true)
  }

  // MARK: Catching up

  /// Reads the head and the log after what is applied, in one txn (one revision), and applies
  /// it; again until the head is reached. `proposal`: a commit whose outcome is unknown, which
  /// may be the first entry.
  private func catchUp(after proposal: Proposal? = nil) {
    if proposal == nil { phase = .catchingUp }
    // After a commit whose outcome is unknown, from the revision before its group.
    let applied = proposal?.base ?? server.service.model.revision
    let txn = Txn(
      compare: [],
      success: [
        .range(RangeRequest(key: headKey)),
        .range(
          RangeRequest(
            key: logKey(applied + 1), rangeEnd: RangeRequest.prefixEnd(logPrefix), limit: Fleet.catchUpBatch)),
      ])
    client.txn(txn) { [unowned self] result in
      switch result {
      case .success(let answer):
        contact()
        caughtUp(answer, after: proposal)
      case .failure(let error):
        failed(error)
        if let proposal {
          retry(proposal, because: error, mayBeApplied: true) { [unowned self] in catchUp(after: proposal) }
        } else {
          phase = .idle
        }
      }
    }
  }

  private func caughtUp(_ answer: TxnResponse, after proposal: Proposal?) {
    guard answer.responses.count == 2, case .range(let heads) = answer.responses[0],
      case .range(let logs) = answer.responses[1], let head = heads.kvs.first,
      let (revision, _, _) = parseHead(head.value)
    else {
      Log.error("fleet: the head under \(options.prefix) is missing or damaged; changes are refused")
      server.service.changeRefusal = ProtocolError(
        .unavailable, "the fleet's head in etcd is missing or damaged")
      finishCatchUp(proposal)
      return
    }
    seenRevision = max(seenRevision, revision)
    if let (_, snapshot, _) = parseHead(head.value) { snapshotRevision = snapshot }
    var pending = proposal
    for entry in logs.kvs {
      guard apply(entry, ownCommit: &pending) else {
        if pending != nil { server.fleetRetry() }
        adoptSnapshot()
        return
      }
    }
    if let unknown = pending, revision <= unknown.base {
      // The head moved without an entry after ours (another host's fence): the group was not
      // committed, and can never be now.
      pending = nil
      server.fleetRetry()
    }
    if server.service.model.revision >= revision {
      headRevision = head.modRevision
      finishCatchUp(pending)
    } else if logs.kvs.isEmpty {
      adoptSnapshot()
    } else {
      catchUp(after: pending)
    }
  }

  private func finishCatchUp(_ proposal: Proposal?) {
    if let proposal {
      // Still unknown: the head did not reach past it.
      phase = .committing(proposal)
      return
    }
    phase = .idle
    server.fleetCaughtUp()
  }

  /// Applies one log entry if it is the next; false when it is not (the log was trimmed past
  /// what is applied: only the snapshot can help), or cannot be applied. An entry with the id
  /// of the commit whose outcome was unknown is that commit: the group applied here is kept;
  /// another host's entry in its place means it was never committed, and is run again.
  private func apply(_ entry: KeyValue, ownCommit: inout Proposal?) -> Bool {
    guard let revision = logRevision(entry.key) else { return true }
    let decoded: FleetEntry
    do {
      decoded = try FleetEntry.decode(entry.value)
    } catch {
      Log.error("fleet: the entry at revision \(revision) cannot be read: \(error.message)")
      return false
    }
    if let proposal = ownCommit {
      if revision <= proposal.base { return true }
      ownCommit = nil
      if decoded.commit == proposal.commit {
        headRevision = entry.modRevision
        server.fleetCommitted()
        return true
      }
      server.fleetRetry()
    }
    let applied = server.service.model.revision
    if revision <= applied { return true }
    do throws(ProtocolError) {
      switch decoded.body {
      case .changes(let changes, let authors):
        guard changes.first?.revision == applied + 1 else { return false }
        try server.service.applyRemote(changes, authors: authors)
        server.fleetApplied()
      case .state(let state):
        server.fleetAdopt(state)
      }
    } catch {
      Log.error(
        "fleet: cannot apply the entry at revision \(revision): \(error.message); loading the fleet's state afresh"
      )
      return false
    }
    headRevision = entry.modRevision
    return true
  }

  private func catchUpIfBehind() {
    if seenRevision > server.service.model.revision, canApply { catchUp() }
  }

  // MARK: Joining and adopting

  private func join() {
    client.range(RangeRequest(key: headKey)) { [unowned self] result in
      switch result {
      case .failure(let error):
        failed(error)
        later { [unowned self] in join() }
      case .success(let answer):
        contact()
        if let head = answer.kvs.first { adopt(head) } else { seed() }
      }
    }
  }

  /// The prefix is empty: this host's list becomes the fleet's, unless another host was first.
  private func seed() {
    let revision = server.service.model.revision
    var state: [UInt8] = []
    server.service.encodeState(into: &state)
    guard state.count <= Fleet.entryLimit else {
      Log.error(
        "fleet: the list takes \(state.count) bytes, more than the fleet's \(Fleet.entryLimit); it cannot seed the fleet"
      )
      return
    }
    fleetID = String(UInt64.random(in: 1...UInt64.max), radix: 36)
    let txn = Txn(
      compare: [Compare(key: headKey, .createRevision(0))],
      success: [
        .put(key: snapshotKey, value: state),
        .put(key: headKey, value: headValue(revision, snapshot: revision)),
      ],
      failure: [.range(RangeRequest(key: headKey))])
    client.txn(txn) { [unowned self] result in
      switch result {
      case .failure(let error):
        failed(error)
        later { [unowned self] in join() }
      case .success(let answer) where answer.succeeded:
        contact()
        headRevision = answer.header.revision
        snapshotRevision = revision
        Log.notice("fleet: seeded \(options.prefix) with this host's list at revision \(revision)")
        joined()
      case .success:
        contact()
        join()
      }
    }
  }

  /// The fleet exists: catch up from this host's state if it is the fleet's and the log still
  /// reaches it, else load the snapshot.
  private func adopt(_ head: KeyValue) {
    guard let (revision, snapshot, id) = parseHead(head.value) else {
      Log.error("fleet: the head under \(options.prefix) is damaged; not joining")
      return
    }
    let applied = server.service.model.revision
    if id == server.fleetMark(), applied >= snapshot, applied <= revision {
      fleetID = id
      snapshotRevision = snapshot
      Log.notice("fleet: catching up from revision \(applied) to \(revision) under \(options.prefix)")
      joined()
      catchUp()
    } else {
      Log.notice(
        "fleet: the fleet's list under \(options.prefix) is at revision \(revision); this host's config is not used"
      )
      fleetID = id
      adoptSnapshot(joining: true)
    }
  }

  /// Loads the fleet's snapshot and head at one revision, adopts it, then catches up the log.
  private func adoptSnapshot(joining: Bool = false) {
    phase = joining ? .joining : .catchingUp
    let txn = Txn(
      compare: [], success: [.range(RangeRequest(key: headKey)), .range(RangeRequest(key: snapshotKey))])
    client.txn(txn) { [unowned self] result in
      switch result {
      case .failure(let error):
        failed(error)
        later { [unowned self] in adoptSnapshot(joining: joining) }
      case .success(let answer):
        contact()
        guard answer.responses.count == 2, case .range(let snapshots) = answer.responses[1],
          let snapshot = snapshots.kvs.first, let state = try? SavedState.decode(snapshot.value)
        else {
          Log.error("fleet: the snapshot under \(options.prefix) is missing or damaged; changes are refused")
          server.service.changeRefusal = ProtocolError(
            .unavailable, "the fleet's snapshot in etcd is damaged")
          return
        }
        snapshotRevision = state.revision
        headRevision = 0
        server.fleetAdopt(state)
        Log.notice("fleet: loaded the fleet's state at revision \(state.revision)")
        if joining { joined() }
        phase = .catchingUp
        catchUp()
      }
    }
  }

  private func joined() {
    server.service.changeRefusal = nil
    server.markFleet(fleetID)
    if case .joining = phase { phase = .idle }
    startWatch()
    poller?.rearm(after: Fleet.pollInterval)
    poller?.setEnabled(true)
  }

  // MARK: Watching and polling

  private func startWatch() {
    watch?.cancel()
    // From now on: what came before is read by the catch-up that follows a (re)start.
    watch = client.watch(WatchRequest.prefix(logPrefix)) { [unowned self] update in
      switch update {
      case .events(let events, _):
        contact()
        for event in events where event.kind == .put {
          guard let revision = logRevision(event.kv.key) else { continue }
          seenRevision = max(seenRevision, revision)
          if canApply, revision == server.service.model.revision + 1 {
            var none: Proposal?
            if !apply(event.kv, ownCommit: &none) { catchUp() }
          }
        }
        catchUpIfBehind()
      case .created, .progress:
        contact()
      case .compacted, .canceled, .failed:
        watch = nil
      }
    }
  }

  private func poll() {
    poller?.rearm(after: Fleet.pollInterval)
    guard canApply else { return }
    if watch == nil {
      startWatch()
      catchUp()
      return
    }
    client.range(RangeRequest(key: headKey)) { [unowned self] result in
      switch result {
      case .success(let answer):
        contact()
        if let head = answer.kvs.first, let (revision, _, _) = parseHead(head.value) {
          seenRevision = max(seenRevision, revision)
          if revision == server.service.model.revision, head.modRevision != headRevision, !isBusy {
            // A fence moved the head without an entry.
            headRevision = head.modRevision
          }
        }
        if server.service.changeRefusal?.code == .unavailable, case .idle = phase {
          server.service.changeRefusal = nil
        }
        catchUpIfBehind()
      case .failure(let error):
        failed(error)
        server.service.changeRefusal = unavailable(error)
      }
    }
  }

  private func contact() {
    lastContact = monotonicMicroseconds()
    if let since = staleSince {
      Log.notice(
        "fleet: etcd answers again (\(member)) after \((lastContact - since) / 1000) ms; at revision \(server.service.model.revision)"
      )
    }
    staleSince = nil
    lastError = nil
  }

  private func failed(_ error: EtcdError) {
    if case .joining = phase {
      server.service.changeRefusal = ProtocolError(.unavailable, "not joined to the fleet yet: \(error)")
    }
    if staleSince == nil { staleSince = monotonicMicroseconds() }
    if lastError == nil { Log.warning("fleet: etcd: \(error)") }
    lastError = "\(error)"
  }

  private func unavailable(_ error: EtcdError) -> ProtocolError {
    ProtocolError(
      .unavailable, "etcd: \(error); reads are served from revision \(server.service.model.revision)")
  }

  // MARK: Keys and values

  private func logKey(_ revision: UInt64) -> [UInt8] {
    let digits = String(revision)
    return logPrefix + Array((String(repeating: "0", count: max(0, 20 - digits.count)) + digits).utf8)
  }

  private func logRevision(_ key: [UInt8]) -> UInt64? {
    guard key.count == logPrefix.count + 20, key.starts(with: logPrefix) else { return nil }
    return UInt64(String(decoding: key[logPrefix.count...], as: UTF8.self))
  }

  private func headValue(_ revision: UInt64, snapshot: UInt64) -> [UInt8] {
    Array("\(revision) \(snapshot) \(fleetID)".utf8)
  }

  private func parseHead(_ value: [UInt8]) -> (UInt64, UInt64, String)? {
    let words = String(decoding: value, as: UTF8.self).split(separator: " ")
    guard words.count == 3, let revision = UInt64(words[0]), let snapshot = UInt64(words[1]) else {
      return nil
    }
    return (revision, snapshot, String(words[2]))
  }
}
