import Etcd
import Posix
import SectionCore
import SectionServer

/// etcd's space: the history the fleet leaves behind is compacted at each snapshot, so that
/// etcd's database stays within a bound set by the fleet's limits rather than by the rate of
/// changes (docs/FLEET.md, "Sizing etcd's quota"); and a write etcd refuses for want of space
/// (its NOSPACE alarm) is told apart from a member that does not answer.
extension Fleet {
  /// Drops etcd's history before `revision`, the etcd revision at which a snapshot became
  /// current: nothing in the fleet reads older versions (watches start from now, a catch-up
  /// reads the newest log, and pieces are read at the revision of the pointer that names
  /// them, never older than the snapshot before). etcd's own periodic compaction keeps an
  /// hour, which the largest groups at the rate one client reaches fill many times over.
  /// Another host's compaction, or etcd's, that went further is no failure.
  func compactHistory(before revision: Int64) {
    guard revision > 1 else { return }
    client.compact(revision: revision) { result in
      guard case .failure(let error) = result else { return }
      if case .compacted = error.kind { return }
      Log.warning("fleet: compacting etcd's history before revision \(revision): \(error)")
    }
  }

  /// etcd refused a write for want of space: it answered, so the host is not stale; changes
  /// are refused at once with the fix, until a write succeeds or the poll finds the alarm
  /// gone. Logged once, when it begins.
  func refusedForSpace(_ error: EtcdError) -> ProtocolError {
    if outOfSpace == nil {
      Log.error(
        "fleet: etcd refuses writes for want of space (NOSPACE, \(error.member ?? member)); changes are refused until an operator compacts, defragments and disarms the alarm"
      )
    }
    contact()
    let text =
      "etcd is out of space (its NOSPACE alarm, \(error.member ?? member)): an operator must compact, defragment and disarm it (docs/FLEET.md, \"Sizing etcd's quota\"); reads are served from revision \(savedRevision)"
    outOfSpace = text
    let refusal = ProtocolError(.unavailable, text)
    gate.refusal = refusal
    return refusal
  }

  /// A write went through, or the alarm is gone: etcd has room again.
  func roomAgain() {
    guard outOfSpace != nil else { return }
    outOfSpace = nil
    Log.notice("fleet: etcd takes writes again (no NOSPACE alarm)")
    if gate.refusal?.code == .unavailable, case .idle = phase {
      gate.refusal = nil
    }
  }

  /// From the poll, while etcd is out of space: whether the alarm is still raised (a member's
  /// status lists the cluster's alarms), so that STATUS says so no longer than it lasts.
  func checkSpace() {
    client.status { [unowned self] result in
      guard case .success(let status) = result, outOfSpace != nil else { return }
      if !status.errors.contains(where: { $0.contains("NOSPACE") }) { roomAgain() }
    }
  }
}
