import Glibc
import SectionCore
import Systemd

/// Who may change state over the bus. Root, the daemon's own user, and members of the
/// `sectiond` group (the control socket's group under the system unit) have a direct right,
/// what the control socket's permissions allow them; any other caller may do what polkit
/// grants it, asked per call (`BusCall.checkAuthorization`) for the action of the call's level,
/// since polkit's answer can change with the caller's seat, its authentication and the rules.
/// Without polkit on the machine, the direct right alone decides. Reading is open to every peer.
///
/// The caller's effective uid and supplementary groups come from the bus daemon
/// (GetConnectionCredentials, see `BusCall.askSenderCredentials`), which took them from the
/// caller's socket when it connected. The direct right's answer is kept per unique name: a unique name is never
/// given to another connection while the bus runs, and asking costs a round trip to the bus
/// daemon that the loop would wait for on every change. A restarted bus daemon gives the
/// same names out again, so the answers are forgotten whenever the connection to the bus is
/// made anew (`forget()`).
struct BusAccess {
  /// The group whose members may change state; nil when there is no such group.
  let group: gid_t? = getgrnam("sectiond").map { $0.pointee.gr_gid }
  let ownUser = getuid()
  private var decided: [String: Bool] = [:]
  /// Who each caller is, for the history.
  private var authors: [String: Author] = [:]
  /// polkit was found missing, and that was logged: the log says so once, not for every call.
  private var polkitAbsentLogged = false
  /// Unique names remembered at most; past it the cache starts over (a name asks again).
  static let remembered = 4096

  /// Drops every answer: they were about the unique names of a bus connection that is gone.
  mutating func forget() {
    decided.removeAll()
    authors.removeAll()
  }

  /// Who `sender` is in the history: known once the bus daemon said.
  func author(_ sender: String) -> Author {
    authors[sender] ?? Author(via: .bus, uid: nil, pid: nil, name: nil)
  }

  /// The answer for `sender`, if it was decided.
  func mayChange(_ sender: String) -> Bool? { decided[sender] }

  /// Decides for `sender` from what the bus daemon said about it, and keeps the answer.
  mutating func decide(_ sender: String, _ credentials: Result<BusCredentials, any Error>) {
    let allowed: Bool
    switch credentials {
    case .success(let credentials):
      allowed =
        credentials.uid == 0 || credentials.uid == ownUser || group.map(credentials.groups.contains) == true
    case .failure(let error):
      Log.warning("D-Bus: cannot tell who \(sender) is (\(error)); its changes are refused")
      allowed = false
    }
    if decided.count >= BusAccess.remembered {
      decided.removeAll(keepingCapacity: true)
      authors.removeAll(keepingCapacity: true)
    }
    decided[sender] = allowed
    if case .success(let credentials) = credentials {
      authors[sender] = Author(via: .bus, uid: credentials.uid, pid: credentials.pid)
    }
  }

  /// The polkit action of a level above read (the policy file org.sectiond.Sectiond1.policy).
  static func action(_ level: AccessLevel) -> String { "org.sectiond.Sectiond1.\(level.rawValue)" }

  /// polkit's refusal of `member`, which needs `needs`, as the protocol's DENIED says it: the
  /// two levels first (a caller without a direct right has read), then what to do.
  static func refusal(_ member: String, needs: AccessLevel) -> String {
    "\(needs.rawValue) \(AccessLevel.read.rawValue) \(member) needs the \(needs.rawValue) level, and polkit"
      + " does not grant \(action(needs)) to this caller; nothing was changed; an administrator grants it"
      + " with a polkit rule (docs/DBUS.md, \"Granting with a polkit rule\")"
  }

  /// What polkit's answer for `sender` means: a polkit that failed, or is not there, grants
  /// nothing, which the log says (once for a missing polkit).
  mutating func granted(_ sender: String, _ answer: Result<PolkitAnswer, any Error>) -> PolkitAnswer {
    switch answer {
    case .success(.absent):
      if !polkitAbsentLogged {
        Log.notice(
          "D-Bus: polkit is not on this bus (org.freedesktop.PolicyKit1 neither runs nor is activatable);"
            + " callers other than root, the daemon's user and group sectiond may only read"
        )
        polkitAbsentLogged = true
      }
      return .absent
    case .success(let answer):
      polkitAbsentLogged = false
      return answer
    case .failure(let error):
      // Another peer's error text: at most a line's worth of it, without control characters.
      Log.warning(
        "D-Bus: polkit did not decide for \(sender) (\(VisibleName.of("\(error)", limit: 300))); its change is refused"
      )
      return .notAuthorized
    }
  }
}
