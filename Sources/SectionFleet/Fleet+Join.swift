import Etcd
import Posix
import SectionCore
import SectionServer
import Systemd

/// Joining (seeding an empty prefix, or adopting the fleet's list), then the watch that brings
/// other hosts' groups and the poll that finds a member gone quiet.
extension Fleet {
  /// Reads the head and the prefix's first key at one revision: only a prefix without a head, a
  /// log or a snapshot is seeded; one with a log or a snapshot but no head is a damaged fleet,
  /// which this host's list must not replace.
  func join() {
    let prefix = Array(options.prefix.utf8)
    let txn = Txn(
      compare: [],
      success: [.range(RangeRequest(key: headKey)), .range(RangeRequest.prefix(prefix, limit: 1))])
    client.txn(txn) { [unowned self] result in
      switch result {
      case .failure(let error):
        failed(error)
        later { [unowned self] in join() }
      case .success(let answer):
        contact()
        guard answer.responses.count == 2, case .range(let heads) = answer.responses[0],
          case .range(let keys) = answer.responses[1]
        else { return halt(at: headKey, "was not answered as read") { [unowned self] in join() } }
        if let head = heads.kvs.first {
          adopt(head)
        } else if let found = keys.kvs.first, !found.key.starts(with: piecesPrefix) {
          // (Pieces alone sort last: another host seeding a large list writes them before its
          // txn, and a seed that failed leaves them; neither is a fleet.)
          halt(
            at: headKey,
            "is missing, but the prefix holds \(Fleet.shown(found.key)): a damaged fleet, not an empty one; restore etcd's backup (docs/FLEET.md, \"Restoring etcd from a backup\"), or delete the prefix to seed it afresh"
          ) { [unowned self] in join() }
        } else {
          seed()
        }
      }
    }
  }

  /// The prefix is empty: this host's list becomes the fleet's, unless another host was first.
  /// A list larger than one request goes in pieces first, then the txn names them.
  func seed() {
    let revision = appliedRevision
    var state: [UInt8] = []
    server.service.encodeState(into: &state)
    fleetID = String(UInt64.random(in: 1...UInt64.max), radix: 36)
    guard state.count > Fleet.entryLimit else {
      return seed(snapshot: state, revision: revision, state: 0)
    }
    let pending = pendingSnapshot(state, revision: revision)
    writePieces(pending) { [unowned self] error in
      if let error {
        failed(error)
        later { [unowned self] in join() }
        return
      }
      seed(
        snapshot: pending.pointer.encoded, revision: revision, state: pending.pointer.bytes,
        pieces: pieceRange(pending.pointer))
    }
  }

  /// The txn that seeds the fleet where nothing is: `snapshot` (the state, or the pointer to
  /// the `pieces` written before, of a `state` of that many bytes), and the head. Where another
  /// host was first, it deletes the pieces.
  func seed(snapshot: [UInt8], revision: UInt64, state: Int, pieces: (start: [UInt8], end: [UInt8])? = nil) {
    var failure: [Operation] = [.range(RangeRequest(key: headKey))]
    if let pieces { failure.append(.delete(key: pieces.start, rangeEnd: pieces.end)) }
    let txn = Txn(
      compare: [Compare(key: headKey, .createRevision(0)), Compare(key: snapshotKey, .createRevision(0))],
      success: [
        .put(key: snapshotKey, value: snapshot),
        .put(key: headKey, value: headValue(revision, snapshot: revision)),
      ],
      failure: failure)
    client.txn(txn) { [unowned self] result in
      switch result {
      case .failure(let error):
        failed(error)
        later { [unowned self] in join() }
      case .success(let answer) where answer.succeeded:
        contact()
        headRevision = answer.header.revision
        snapshotRevision = revision
        snapshotKnown(revision, bytes: state)
        repaired()
        Log.notice("fleet: seeded \(options.prefix) with this host's list at revision \(revision)")
        listSource = "this host's config (it seeded the fleet at revision \(revision))"
        joined()
        server.resumeChanges()
      case .success:
        contact()
        join()
      }
    }
  }

  /// The fleet exists: catch up from this host's state if it is the fleet's and the log still
  /// reaches it, else load the snapshot.
  func adopt(_ head: KeyValue) {
    guard let (revision, snapshot, id) = parseHead(head.value) else {
      return halt(at: headKey, "is damaged: not `<revision> <snapshot revision> <fleet id>`") {
        [unowned self] in join()
      }
    }
    let applied = appliedRevision
    let ours = id == mark()
    fleetID = id
    // This host's state is the fleet's: a head before it means etcd went back.
    if ours, case .failure(let problem) = checkedHead(head, applied: applied) {
      return halt(at: headKey, problem.message) { [unowned self] in join() }
    }
    if ours, applied >= snapshot {
      snapshotRevision = snapshot
      Log.notice("fleet: catching up from revision \(applied) to \(revision) under \(options.prefix)")
      listSource =
        "the fleet's list (caught up from this host's state file at revision \(applied)); \(Fleet.configUnused)"
      joined()
      catchUp()
    } else {
      Log.notice(
        "fleet: the fleet's list under \(options.prefix) is at revision \(revision); \(Fleet.configUnused)"
      )
      adoptSnapshot(joining: true)
    }
  }

  /// Loads the fleet's snapshot and head at one revision, adopts it, then catches up the log.
  /// `missing`: the log key a catch-up needed and did not find; a snapshot that does not reach
  /// past it cannot help, and the key is what is wrong (read again by a catch-up).
  func adoptSnapshot(joining: Bool = false, missing: [UInt8]? = nil) {
    handle(joining ? .join : .readSnapshot)
    let txn = Txn(
      compare: [], success: [.range(RangeRequest(key: headKey)), .range(RangeRequest(key: snapshotKey))])
    client.txn(txn) { [unowned self] result in
      switch result {
      case .failure(let error):
        failed(error)
        later { [unowned self] in adoptSnapshot(joining: joining, missing: missing) }
      case .success(let answer):
        contact()
        guard answer.responses.count == 2, case .range(let snapshots) = answer.responses[1],
          let snapshot = snapshots.kvs.first
        else { return damagedSnapshot("is missing", joining: joining) }
        if let missing, let revision = snapshotRevision(in: snapshot.value),
          revision <= appliedRevision
        {
          return halt(
            at: missing, "is missing, and the fleet's snapshot at revision \(revision) does not reach past it"
          ) { [unowned self] in catchUp() }
        }
        let started = monotonicMicroseconds()
        // The pieces at the revision the pointer was read at: a newer snapshot made current
        // meanwhile deletes them, but not from that revision.
        readSnapshot(snapshot.value, at: answer.header.revision) { [unowned self] result in
          switch result {
          case .failure(let error) where error.code == .unavailable:
            Log.warning("fleet: reading the fleet's snapshot: \(error.message)")
            later { [unowned self] in adoptSnapshot(joining: joining, missing: missing) }
          case .failure(let error):
            damagedSnapshot("is damaged: \(error.message)", joining: joining)
          case .success(let bytes):
            let state: SavedState
            do {
              state = try SavedState.decode(bytes)
            } catch {
              return damagedSnapshot("is not a state: \(error)", joining: joining)
            }
            // A joining host takes the fleet's list whatever its own; a member of the fleet
            // never goes back.
            guard joining || state.revision >= appliedRevision else {
              return damagedSnapshot(
                "holds revision \(state.revision), before the \(appliedRevision) this host applied",
                joining: joining)
            }
            repaired()
            snapshotRevision = state.revision
            snapshotKnown(state.revision, bytes: bytes.count)
            headRevision = 0
            server.adopt(state)
            listSource = "the fleet's list (loaded at revision \(state.revision)); \(Fleet.configUnused)"
            Log.notice(
              "fleet: loaded the fleet's state at revision \(state.revision) (\(bytes.count) bytes, \((monotonicMicroseconds() - started) / 1000) ms)"
            )
            if joining { joined() }
            catchUp()
          }
        }
      }
    }
  }

  func damagedSnapshot(_ problem: String, joining: Bool) {
    halt(at: snapshotKey, problem) { [unowned self] in adoptSnapshot(joining: joining) }
  }

  /// The fleet's list is this host's (seeded, adopted, or its own state is the fleet's): the
  /// changes that waited for it run once the catch-up that follows is through (at once after
  /// seeding: the caller releases them).
  func joined() {
    gate.refusal = nil
    markState(fleetID)
    handle(.joined)
    joinTimer?.cancel()
    joinTimer = nil
    startWatch()
    poller?.rearm(after: Fleet.pollInterval)
    poller?.setEnabled(true)
    announceReady()
  }

  /// The join takes longer than a change may wait (etcd unreachable, or the fleet's keys
  /// damaged), or etcd refused it: the changes that waited are refused, and every change after
  /// them until the join is done; the host tells systemd it is up all the same, as it serves
  /// reads from its state file, so that a unit ordered after it is not held up by etcd.
  func joinBoundPassed() {
    joinTimer?.cancel()  // it may be the timer's own call: kept until the join drops it
    guard case .joining = phase else { return }
    gate.refusal = damageRefusal(at: appliedRevision) ?? notJoined(lastFailure)
    if damage == nil { Log.warning("fleet: \(gate.refusal!.message)") }  // else logged
    server.resumeChanges()
    announceReady()
  }

  /// The fleet this host's state file belongs to (its id and prefix, in a file beside it), so
  /// that a restart catches up from its own state only in the same fleet. Empty when unknown.
  func mark() -> String {
    guard let path = markPath, let bytes = try? FileSystem.readFile(path, limit: 4096) else { return "" }
    let words = String(decoding: bytes, as: UTF8.self).split(separator: " ")
    guard words.count == 2, words[1] == options.prefix else { return "" }
    return String(words[0])
  }

  func markState(_ id: String) {
    guard let path = markPath else { return }
    do {
      try FileSystem.replaceAtomically(path, with: Array("\(id) \(options.prefix)".utf8), sync: false)
    } catch {
      Log.warning("cannot write \(path) (\(error)); the next start loads the fleet's state afresh")
    }
  }

  private var markPath: String? { server.localCommit.statePath.map { $0 + ".fleet" } }

  func announceReady() {
    guard !announced else { return }
    announced = true
    Notifier.ready(status: server.statusLine)
  }

  func startWatch() {
    watch?.cancel()
    // From now on: what came before is read by the catch-up that follows a (re)start.
    // Puts only: the log's entries; its trimming at each snapshot is nothing to apply.
    watch = client.watch(
      WatchRequest.prefix(logPrefix, withoutDeletes: true), skip: { [unowned self] in skipsOwn($0) }
    ) {
      [unowned self] update in
      switch update {
      case .events(let events, _):
        contact()
        for event in events where event.kind == .put {
          guard let revision = logRevision(event.kv.key) else { continue }
          seenRevision = max(seenRevision, revision)
          // The key is the group's last revision: a group of several changes that follows on
          // is applied here too (`apply` checks its first), anything else is read by a catch-up.
          if canApply, revision > appliedRevision {
            var none: Proposal?
            if case .applied = apply(event.kv, ownCommit: &none) {} else { catchUp() }
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

  /// Whether a watch line is this host's own commit (its header, host and commit id, begins
  /// the line's one value): nothing in it is news here, so it is not parsed. While that commit
  /// is under way, the line is its acknowledgement: only a committed txn puts the entry, and
  /// etcd's gateway sends it down the watch about as soon as the txn's answer, mostly before it
  /// (90% of TOGGLEs at one in flight, docs/PERFORMANCE.md), so the clients hear OK that much
  /// sooner and the answer, when it comes, is stale (`awaits`). Not for a group whose snapshot
  /// is written in pieces: that needs the pointer only the answer has. Once the commit is
  /// applied the line is skipped as well; an own entry that turns up after its commit was given
  /// up on (outcome unknown) is applied as any other host's.
  func skipsOwn(_ line: ArraySlice<UInt8>) -> Bool {
    guard let own = ownEntry, let revision = own.prefix.revision(in: line) else { return false }
    let underWay: Proposal? = if case .committing(let p) = phase, p.commit == own.commit { p } else { nil }
    guard underWay != nil || own.revision <= appliedRevision else { return false }
    seenRevision = max(seenRevision, own.revision)
    if let proposal = underWay, proposal.pieces == nil {
      committed(proposal, at: revision, by: .ownEntry)  // which also notes the contact and catches up if behind
    } else {
      contact()
      catchUpIfBehind()
    }
    return true
  }

  func poll() {
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
          // A head before what is applied: the catch-up says what is wrong.
          if revision < appliedRevision, canApply { return catchUp() }
          seenRevision = max(seenRevision, revision)
          // A fence moved the head without an entry: the next commit compares the newer head.
          // Only with nothing unsaved here: a group gathering locally can reach the very list
          // revision another host's commit brought the head to, and comparing that head would
          // let the group commit over the other's entry (fleet-faults sectiond-kill caught a
          // host acknowledging such a group once). And only a newer head than the one known:
          // the answer may be older than this host's last commit.
          if revision == appliedRevision, head.modRevision > headRevision, canApply {
            headRevision = head.modRevision
          }
        }
        if gate.refusal?.code == .unavailable, case .idle = phase, damage == nil {
          gate.refusal = nil
        }
        if outOfSpace != nil { checkSpace() }
        catchUpIfBehind()
      case .failure(let error):
        failed(error)
        gate.refusal = unavailable(error)
      }
    }
  }

  func contact() {
    if let since = staleSince {
      Log.notice(
        "fleet: etcd answers again (\(member)) after \((monotonicMicroseconds() - since) / 1000) ms; at revision \(appliedRevision)"
      )
    }
    staleSince = nil
    lastError = nil
  }

  func failed(_ error: EtcdError) {
    lastFailure = error
    // etcd answered: out of space is not stale.
    if error.kind == .noSpace { return gate.refusal = refusedForSpace(error) }
    if case .joining = phase {
      if gate.refusal != nil {
        gate.refusal = notJoined(error)
      } else if case .rejected = error.kind {
        // etcd's refusal (a wrong password, a role without the prefix) does not pass by
        // waiting: the changes that wait for the join are refused now.
        joinBoundPassed()
      }
    }
    if staleSince == nil { staleSince = monotonicMicroseconds() }
    if lastError == nil { Log.warning("fleet: \(error)") }
    lastError = "\(error)"
  }

  /// The refusal a change gets while etcd cannot take it: what is wrong and what to do, in
  /// one line. Each member's own error is in STATUS's `fleet-error` and the log, not here: a
  /// client needs the verdict, and the members' texts are theirs, not the protocol's.
  func unavailable(_ error: EtcdError, _ outcome: String = "") -> ProtocolError {
    ProtocolError(
      .unavailable,
      "\(error.headline(members: options.members.count))\(outcome); reads are served from revision \(savedRevision); \(error.remedy)"
    )
  }

  func notJoined(_ error: EtcdError?) -> ProtocolError {
    let why = error.map { "\($0.headline(members: options.members.count)); \($0.remedy)" } ?? "see the log"
    return ProtocolError(.unavailable, "not joined to the fleet under \(options.prefix) yet: \(why)")
  }
}
