import Glibc
import Posix
import SectionCore

/// Who connecting to the control socket gets which `AccessLevel`: the administrator's rules,
/// read from a file (`--access`, default `access.conf` beside the config), one a line:
///
///     user NAME|UID LEVEL
///     group NAME|GID LEVEL
///     others LEVEL
///
/// with `#` comments and blank lines. Root and the daemon's own user are always `edit`: they
/// own the state file and the unit (whose `ExecReload=` is a RELOAD on this socket, made as
/// the daemon's user), so no rule names them. A `user` rule naming the peer's uid decides; else the
/// highest level among the `group` rules naming its effective or a supplementary group; else
/// `others`; else `edit`, the control socket's level before there were rules. Who may connect
/// at all stays the socket's mode, enforced by the kernel: rules only ever decide what a
/// connection the kernel let in may do. Names are resolved when the rules are read, so that
/// accepting a connection asks no user database.
struct AccessRules: Equatable {
  var users: [uid_t: AccessLevel] = [:]
  var groups: [gid_t: AccessLevel] = [:]
  var others: AccessLevel?
  /// The daemon's own user, always `edit` as root is.
  var daemonUser: uid_t = ProcessInfo.userID

  /// The rules of none: every connection of the control socket is `edit`, as always.
  static let none = AccessRules()

  /// The most a rules file may hold: a user database's worth of lines, not a disk's.
  static let maximumBytes = 1 << 20

  /// The rules `text` states; `file` names it in errors. `userID` and `groupID` resolve a
  /// name (the system's user and group databases; tests hand in their own).
  static func parse(
    _ text: [UInt8], file: String, userID: (String) -> uid_t? = ProcessInfo.userID(named:),
    groupID: (String) -> gid_t? = ProcessInfo.groupID(named:)
  ) throws(ConfigError) -> AccessRules {
    guard text.count <= maximumBytes else {
      throw ConfigError("\(file): larger than \(maximumBytes) bytes; access rules are a few lines")
    }
    guard let text = String(validating: text, as: UTF8.self) else {
      throw ConfigError("\(file): not UTF-8 text")
    }
    var rules = AccessRules()
    for (index, line) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
      let words = (line.firstIndex(of: "#").map { line[..<$0] } ?? line[...])
        .split(whereSeparator: { $0 == " " || $0 == "\t" || $0 == "\r" }).map(String.init)
      if words.isEmpty { continue }
      func problem(_ what: String) -> ConfigError {
        ConfigError(
          "\(file), line \(index + 1): \(what); a rule is \"user NAME LEVEL\", \"group NAME LEVEL\" or \"others LEVEL\", LEVEL one of read, operate, edit"
        )
      }
      guard let levelWord = words.last, let level = AccessLevel(rawValue: levelWord) else {
        throw problem("\"\(VisibleName.of(words.last ?? ""))\" is not a level")
      }
      /// A rule for the user or group `name` (a number, or a name `resolve` knows), once.
      func add(
        _ kind: String, _ name: String, _ resolve: (String) -> UInt32?,
        into table: inout [UInt32: AccessLevel]
      ) throws(ConfigError) {
        guard let id = UInt32(name) ?? resolve(name) else {
          throw problem("no \(kind) \"\(VisibleName.of(name))\" on this system")
        }
        guard table[id] == nil else { throw problem("a second rule for \(kind) \(VisibleName.of(name))") }
        table[id] = level
      }
      switch (words.first, words.count) {
      case ("others", 2):
        guard rules.others == nil else { throw problem("a second \"others\" rule") }
        rules.others = level
      case ("user", 3):
        try add("user", words[1], userID, into: &rules.users)
        if rules.users[0] != nil || rules.users[rules.daemonUser] != nil {
          throw problem("root and the daemon's own user always edit; remove the rule")
        }
      case ("group", 3):
        try add("group", words[1], groupID, into: &rules.groups)
      default:
        throw problem("\"\(VisibleName.of(words.joined(separator: " ")))\" is not a rule")
      }
    }
    return rules
  }

  /// Whether deciding a level needs the peer's supplementary groups (one more getsockopt).
  var needsGroups: Bool { !groups.isEmpty }

  /// The level of a peer of `uid` in `gids` (its effective and supplementary groups).
  func level(uid: uid_t, gids: some Sequence<gid_t>) -> AccessLevel {
    if uid == 0 || uid == daemonUser { return .edit }
    if let level = users[uid] { return level }
    var best: AccessLevel?
    for gid in gids {
      if let level = groups[gid], best.map({ level > $0 }) ?? true { best = level }
    }
    return best ?? others ?? .edit
  }
}
