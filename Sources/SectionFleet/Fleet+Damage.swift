import Etcd
import Posix
import SectionCore
import SectionServer

/// A key under the prefix that this host cannot use: an entry that does not decode or does not
/// follow on, a snapshot that fails its checks, a head that is missing from a fleet that has a
/// log, names another fleet, or went back. Whoever can write the prefix writes these keys, so
/// a bad one is input to refuse, never a reason to reload or start over: the host stays at the
/// revision it applied, keeps serving reads, refuses changes naming the key, logs it once, and
/// reads it again with a growing pause until it is fixed or removed.
extension Fleet {
  struct Damage: Equatable {
    /// The key, as its path shows in a message.
    let key: String
    let problem: String
  }

  /// The first pause before a damaged key is read again, and the longest: a bad key costs etcd
  /// at most a read a second per host, and a fixed one is taken again within seconds.
  static let damageRetry: UInt64 = 1_000_000
  static let damageRetryMost: UInt64 = 4_000_000

  /// `key` cannot be used (`problem` says why): changes are refused until `retry`, run after
  /// the pause, finds it usable. `unknown`: a commit whose outcome the catch-up was to decide;
  /// its requests run again, and are refused.
  func halt(at key: [UInt8], _ problem: String, unknown: Proposal? = nil, retry: @escaping () -> Void) {
    let found = Damage(key: Fleet.shown(key), problem: Fleet.shown(Array(problem.utf8)))
    let applied = unknown?.base ?? appliedRevision
    if damage != found {
      Log.error(
        "fleet: \(found.key) in etcd \(found.problem); this host stays at revision \(applied) and refuses changes until the key is fixed or removed"
      )
      damageDelay = 0
    }
    damage = found
    damageDelay = min(max(damageDelay * 2, Fleet.damageRetry), Fleet.damageRetryMost)
    if case .joining = phase {
      // Changes wait for the join within their bound, past which `joinBoundPassed` refuses
      // them with this; once it has, the refusal says this instead.
      if gate.refusal != nil { gate.refusal = damageRefusal(at: applied) }
    } else {
      handle(.halted)
      gate.refusal = damageRefusal(at: applied)
      if unknown != nil { server.finish(.retry) } else { server.resumeChanges() }
    }
    later(after: damageDelay, retry)
  }

  /// The refusal of every change while a key is damaged, the host at revision `applied`.
  func damageRefusal(at applied: UInt64) -> ProtocolError? {
    damage.map {
      ProtocolError(
        .unavailable,
        "\($0.key) in etcd \($0.problem); reads are served from revision \(applied); changes are taken again once the key is fixed or removed (docs/FLEET.md, \"A damaged key\")"
      )
    }
  }

  /// The damaged key was read again and is usable: changes are taken again.
  func repaired() {
    guard let damage else { return }
    Log.notice(
      "fleet: \(damage.key) can be used again; changes are taken from revision \(appliedRevision)"
    )
    self.damage = nil
    damageDelay = 0
    gate.refusal = nil
  }

  /// A key or a text read from etcd as one printable line: anything but printable ASCII as `?`.
  static func shown(_ bytes: [UInt8]) -> String {
    String(decoding: bytes.map { (0x20..<0x7F).contains($0) ? $0 : UInt8(ascii: "?") }, as: UTF8.self)
  }
}
