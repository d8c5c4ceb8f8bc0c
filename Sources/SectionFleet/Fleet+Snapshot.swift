import Etcd
import Posix
import SectionCore
import SectionServer

/// A snapshot larger than one etcd request, in pieces (`FleetSnapshot`): written piece by
/// piece, each put a request of its own, then made the snapshot by one small txn; read at one
/// etcd revision a few pieces a request, and checked before it is decoded.
extension Fleet {
  /// A state to write in pieces, and its pointer.
  struct PendingSnapshot {
    let state: [UInt8]
    let pointer: FleetSnapshot
  }

  /// Whether a snapshot in pieces of a state of `bytes` is due at `revision` (a multiple of
  /// `snapshotEvery` crossed). A state that fits one txn is snapshotted at every one, as
  /// before pieces; a larger one the first time, then only once the log since the last
  /// snapshot holds half the state's size, or after `piecesEveryAtMost` revisions: a 54 MB
  /// state every 1,000 TOGGLEs would write etcd 54 MB every few seconds, which its history
  /// keeps until it compacts. So the snapshots cost at most twice the log's own bytes. A host
  /// that does not know the last snapshot (another host wrote it since this one loaded one)
  /// counts from what it loaded: it may write one later, or one more, and either is harmless
  /// (`writeSnapshot` compares the pointer).
  func piecesDue(_ revision: UInt64, bytes: Int) -> Bool {
    knownSnapshot.bytes <= Fleet.entryLimit
      || logBytesSinceSnapshot >= bytes / Fleet.piecesLogShare
      || revision >= knownSnapshot.revision + Fleet.piecesEveryAtMost
  }

  /// A snapshot was written, loaded or seeded: the log is counted from it.
  func snapshotKnown(_ revision: UInt64, bytes: Int) {
    knownSnapshot = (revision, bytes)
    logBytesSinceSnapshot = 0
  }

  /// A pending snapshot of this host's state as it is now (at `revision`), under a tag no
  /// other writer uses.
  func pendingSnapshot(_ state: [UInt8], revision: UInt64) -> PendingSnapshot {
    counter += 1
    return PendingSnapshot(
      state: state,
      pointer: FleetSnapshot(
        state: state, revision: revision, tag: "\(boot).\(counter)", pieceSize: Fleet.pieceSize))
  }

  /// The keys of `pointer`'s pieces: `[start, end)`.
  func pieceRange(_ pointer: FleetSnapshot) -> (start: [UInt8], end: [UInt8]) {
    let start = piecesPrefix + pointer.piecePrefix
    return (start, RangeRequest.prefixEnd(start))
  }

  /// Writes the pieces from `index` on, one put each, in order; then `done` (nil: all written).
  /// A put is the same key and value however often it is sent, so a piece whose outcome was
  /// unknown does no harm: pieces no pointer names are deleted by the next snapshot made current.
  func writePieces(
    _ pending: PendingSnapshot, from index: Int = 0, attempt: Int = 1, done: @escaping (EtcdError?) -> Void
  ) {
    let pieces = FleetSnapshot.split(pending.state, pieceSize: Fleet.pieceSize)
    guard index < pieces.count else { return done(nil) }
    client.put(key: piecesPrefix + pending.pointer.pieceKey(index), value: Array(pieces[index])) {
      [unowned self] result in
      switch result {
      case .success: writePieces(pending, from: index + 1, done: done)
      case .failure where attempt < Fleet.pieceAttempts:
        writePieces(pending, from: index, attempt: attempt + 1, done: done)
      case .failure(let error): done(error)
      }
    }
  }

  /// After the group at `pending`'s revision committed: its pieces, then the txn that makes
  /// them the snapshot if the pointer (`replaced`, read by the commit's txn) has not moved
  /// since. It deletes the log before the snapshot it replaces (a host up to `snapshotEvery`
  /// behind still catches up from the log) and every other snapshot's pieces (the previous
  /// one's, and any a writer left that never became current). Where the pointer moved
  /// (another host's snapshot came first), the txn deletes this one's pieces instead.
  func writeSnapshot(_ pending: PendingSnapshot, replacing replaced: KeyValue?) {
    writingSnapshot = true
    let started = monotonicMicroseconds()
    writePieces(pending) { [unowned self] error in
      if let error {
        writingSnapshot = false
        Log.warning(
          "fleet: the snapshot at revision \(pending.pointer.revision) was not written (\(error)); the next one is due at revision \((pending.pointer.revision / Fleet.snapshotEvery + 1) * Fleet.snapshotEvery)"
        )
        return
      }
      let written = monotonicMicroseconds()
      let previous = replaced.flatMap { snapshotRevision(in: $0.value) } ?? 0
      let (start, end) = pieceRange(pending.pointer)
      var success: [Operation] = [.put(key: snapshotKey, value: pending.pointer.encoded)]
      if previous > 0 { success.append(.delete(key: logKey(0), rangeEnd: logKey(previous))) }
      success.append(.delete(key: piecesPrefix, rangeEnd: start))
      success.append(.delete(key: end, rangeEnd: RangeRequest.prefixEnd(piecesPrefix)))
      let txn = Txn(
        compare: [Compare(key: snapshotKey, .modRevision(replaced?.modRevision ?? 0))], success: success,
        failure: [.delete(key: start, rangeEnd: end)])
      client.txn(txn) { [unowned self] result in
        writingSnapshot = false
        switch result {
        case .success(let answer) where answer.succeeded:
          snapshotKnown(pending.pointer.revision, bytes: pending.pointer.bytes)
          // Not before the snapshot it replaced: a host reading that one's pieces still can.
          if let replaced { compactHistory(before: replaced.modRevision) }
          Log.notice(
            "fleet: snapshot at revision \(pending.pointer.revision) written: \(pending.pointer.bytes) bytes in \(pending.pointer.pieces) pieces, \((written - started) / 1000) ms, made current \((monotonicMicroseconds() - written) / 1000) ms later"
          )
        case .success:
          Log.notice(
            "fleet: the snapshot at revision \(pending.pointer.revision) was not made current: another host's came first"
          )
        case .failure(let error):
          Log.warning(
            "fleet: the snapshot at revision \(pending.pointer.revision) may not be current (\(error)); its pieces go with the next one"
          )
        }
      }
    }
  }

  /// The revision of the snapshot in `value` (the pointer, or the state itself); nil when it
  /// cannot be read.
  func snapshotRevision(in value: [UInt8]) -> UInt64? {
    if let pointer = try? FleetSnapshot.decode(value, limit: LocalCommit.readLimit) {
      return pointer.revision
    }
    return (try? SavedState.decode(value))?.revision
  }

  /// The state the snapshot's value `value` holds or names, read at etcd's `revision` (that of
  /// the read that found the pointer), so that pieces deleted since are still there.
  func readSnapshot(
    _ value: [UInt8], at revision: Int64, completion: @escaping (Result<[UInt8], ProtocolError>) -> Void
  ) {
    let pointer: FleetSnapshot
    do {
      guard let decoded = try FleetSnapshot.decode(value, limit: LocalCommit.readLimit) else {
        return completion(.success(value))
      }
      pointer = decoded
    } catch {
      return completion(.failure(error))
    }
    readPieces(pointer, at: revision, into: [], attempt: 1) { result in
      completion(
        result.flatMap { parts in
          do throws(ProtocolError) {
            return .success(try pointer.join(parts))
          } catch {
            return .failure(error)
          }
        })
    }
  }

  /// The pieces from `parts.count` on, `piecesPerRead` a request; fails on etcd's error
  /// (`.unavailable`, with the error; a read is sent again `pieceAttempts` times, unless etcd
  /// compacted the revision) or ends at a key that is not the next piece.
  func readPieces(
    _ pointer: FleetSnapshot, at revision: Int64, into parts: [[UInt8]], attempt: Int,
    completion: @escaping (Result<[[UInt8]], ProtocolError>) -> Void
  ) {
    let (_, end) = pieceRange(pointer)
    let request = RangeRequest(
      key: piecesPrefix + pointer.pieceKey(parts.count), rangeEnd: end, revision: revision,
      limit: Fleet.piecesPerRead)
    client.range(request) { [unowned self] result in
      switch result {
      case .failure(let error):
        var compacted = false
        if case .compacted = error.kind { compacted = true }
        if attempt < Fleet.pieceAttempts, !compacted {
          return readPieces(pointer, at: revision, into: parts, attempt: attempt + 1, completion: completion)
        }
        completion(.failure(ProtocolError(.unavailable, "etcd: \(error)")))
      case .success(let answer):
        var parts = parts
        var next = true
        for kv in answer.kvs where next {
          next = kv.key == piecesPrefix + pointer.pieceKey(parts.count)
          if next { parts.append(kv.value) }
        }
        // A piece missing or out of place ends the read: `join` says what is wrong.
        if !next || answer.kvs.isEmpty || !answer.more || parts.count >= pointer.pieces {
          completion(.success(parts))
        } else {
          readPieces(pointer, at: revision, into: parts, attempt: 1, completion: completion)
        }
      }
    }
  }
}
