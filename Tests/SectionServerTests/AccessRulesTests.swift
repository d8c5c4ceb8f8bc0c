import Glibc
import Posix
import Testing

@testable import SectionCore
@testable import SectionServer

/// The access rules file: what it grants whom, and every way it can be wrong.
@Suite struct AccessRulesTests {
  /// A user and group database of the test's own.
  static func parse(_ text: String) throws(ConfigError) -> AccessRules {
    try AccessRules.parse(
      Array(text.utf8), file: "access.conf",
      userID: { ["kiosk": 1001, "admin": 1002][$0] }, groupID: { ["wall": 2001, "staff": 2002][$0] })
  }

  @Test func noRulesIsEditForEveryone() throws {
    let rules = try Self.parse("# nothing yet\n\n   \n")
    #expect(rules == .none)
    #expect(rules.level(uid: 1001, gids: [2001]) == .edit)
    #expect(!rules.needsGroups)
  }

  @Test func aUserRuleDecidesThenTheHighestGroupThenOthers() throws {
    let rules = try Self.parse(
      """
      user kiosk operate   # the wall display's account
      group wall read
      group staff edit
      user 1003 read
      others operate
      """)
    #expect(rules.needsGroups)
    // The user's own rule wins over every group it is in.
    #expect(rules.level(uid: 1001, gids: [2002]) == .operate)
    #expect(rules.level(uid: 1003, gids: [2002]) == .read)
    // Of the groups, the highest level.
    #expect(rules.level(uid: 1002, gids: [2001, 2002]) == .edit)
    #expect(rules.level(uid: 1002, gids: [2001]) == .read)
    // Neither: others.
    #expect(rules.level(uid: 1002, gids: [9]) == .operate)
    #expect(try Self.parse("group 2001 read").level(uid: 5, gids: [7]) == .edit)
  }

  @Test(arguments: [
    ("user kiosk", "line 1: \"kiosk\" is not a level"),
    ("user kiosk admin", "line 1: \"admin\" is not a level"),
    ("\nuser nobody-here read", "line 2: no user \"nobody-here\" on this system"),
    ("group nogroup edit", "line 1: no group \"nogroup\" on this system"),
    ("others read\nothers edit", "line 2: a second \"others\" rule"),
    ("user kiosk read\nuser 1001 edit", "line 2: a second rule for user 1001"),
    ("group wall read\ngroup wall edit", "line 2: a second rule for group wall"),
    ("users kiosk read", "line 1: \"users kiosk read\" is not a rule"),
    ("user kiosk staff read", "line 1: \"user kiosk staff read\" is not a rule"),
    ("user \u{1B}[2J read", "line 1: no user \"?[2J\" on this system"),
    ("others EDIT", "line 1: \"EDIT\" is not a level"),
  ])
  func aWrongLineNamesItselfAndTheRule(text: String, problem: String) {
    #expect {
      try Self.parse(text)
    } throws: { error in
      "\(error)".hasPrefix("access.conf, \(problem); a rule is \"user NAME LEVEL\"")
    }
  }

  @Test func aFileThatIsNotTextOrTooLargeIsRefused() {
    #expect(throws: ConfigError.self) {
      try AccessRules.parse([0x75, 0xFF, 0x0A], file: "access.conf")
    }
    #expect(throws: ConfigError.self) {
      try AccessRules.parse(Array(repeating: 0x23, count: AccessRules.maximumBytes + 1), file: "access.conf")
    }
  }

  /// Names resolve through the system's databases by default: group root is gid 0 everywhere.
  @Test func theSystemResolvesNames() throws {
    let rules = try AccessRules.parse(Array("group root read\n".utf8), file: "f")
    #expect(rules.groups == [0: .read])
  }

  /// Root and the daemon's own user are edit whatever the rules say (the unit's reload is a
  /// RELOAD made as the daemon's user), and a rule naming them is refused as a mistake.
  @Test func rootAndTheDaemonsUserAlwaysEdit() throws {
    var rules = try Self.parse("others read\ngroup 0 read")
    rules.daemonUser = 999
    #expect(rules.level(uid: 0, gids: [0]) == .edit && rules.level(uid: 999, gids: [5]) == .edit)
    #expect(rules.level(uid: 1001, gids: [5]) == .read)
    #expect(throws: ConfigError.self) { try Self.parse("user 0 read") }
    #expect(throws: ConfigError.self) { try Self.parse("user \(ProcessInfo.userID) operate") }
  }
}

/// A connection kept in systemd's store across a restart: its name carries its access, so
/// that even without the handover record (after a crash) no connection comes back with more.
@Suite struct StoredConnectionNameTests {
  @Test func everyAccessGoesAcrossItsName() {
    let accesses: [SectionService.Access] = [
      .control, .init(level: .operate), .init(level: .read), .readOnly,
    ]
    for access in accesses {
      for subscribed in [false, true] {
        let name = ConnectionStore.name(inode: 42, access: access, subscribed: subscribed)
        let parsed = ConnectionStore.parse(name)
        #expect(parsed?.access == access && parsed?.subscribed == subscribed, "\(name)")
      }
    }
    // The names a daemon before levels gave read as they did.
    #expect(ConnectionStore.parse("c-rw-7")?.access == .control)
    #expect(ConnectionStore.parse("s-ro-7")?.access == .readOnly)
    #expect(ConnectionStore.parse("c-op-7")?.access == .init(level: .operate))
    #expect(ConnectionStore.parse("c-xx-7") == nil)
  }
}
