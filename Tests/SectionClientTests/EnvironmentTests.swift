import Glibc
import Posix
import Testing

@testable import SectionClient

/// Where a program finds the daemon (`SocketLocation`): the environment's variables, the
/// user, the list's name.
@Suite struct EnvironmentTests {
  private func resolve(
    _ environment: Environment, _ explicit: String? = nil, readonly: Bool = false,
    explicitReadonly: String? = nil
  ) -> String {
    SocketLocation.resolve(
      explicit: explicit, readonly: readonly, explicitReadonly: explicitReadonly, environment: environment)
  }

  @Test func socketFollowsTheDaemonsDefaults() throws {
    let user = Environment.fixture(["XDG_RUNTIME_DIR": "/run/user/1000"])
    #expect(resolve(user) == "/run/user/1000/sectiond/control.sock")
    #expect(
      resolve(Environment.fixture(["XDG_RUNTIME_DIR": "/run/user/0"], userID: 0))
        == "/run/sectiond/control.sock")
    let configured = Environment.fixture([
      "SECTIOND_SOCKET": "/tmp/e.sock", "XDG_RUNTIME_DIR": "/run/user/1000",
    ])
    #expect(resolve(configured) == "/tmp/e.sock")
    #expect(resolve(configured, "/tmp/flag.sock") == "/tmp/flag.sock")
    #expect(
      resolve(Environment.fixture(["SECTIOND_SOCKET": ""], userID: 0)) == "/run/sectiond/control.sock")
  }

  @Test func readonlySocketIsBesideTheControlSocket() throws {
    #expect(resolve(Environment.fixture(userID: 0), readonly: true) == "/run/sectiond/readonly.sock")
    #expect(
      resolve(Environment.fixture(), "/tmp/x/control.sock", readonly: true) == "/tmp/x/readonly.sock")
    #expect(resolve(Environment.fixture(), "control.sock", readonly: true) == "readonly.sock")
  }

  @Test func aNamedReadonlySocketIsUsedWherever() {
    let user = Environment.fixture(["XDG_RUNTIME_DIR": "/run/user/1000"])
    #expect(resolve(user, readonly: true, explicitReadonly: "/srv/ro.sock") == "/srv/ro.sock")
    #expect(
      resolve(user, readonly: false, explicitReadonly: "/srv/ro.sock")
        == "/run/user/1000/sectiond/control.sock")
  }

  @Test func withoutARuntimeDirectoryTheDaemonsTemporaryDirectory() {
    #expect(resolve(Environment.fixture(userID: 1000)) == "/tmp/sectiond-1000/control.sock")
    #expect(
      resolve(Environment.fixture(["XDG_RUNTIME_DIR": ""], userID: 7)) == "/tmp/sectiond-7/control.sock")
  }

  /// A user other than root: their own daemon if it answers, else the system's.
  @Test func aUserFallsBackToTheSystemDaemon() throws {
    let user = Environment.fixture(["XDG_RUNTIME_DIR": "/run/user/7"], userID: 7)
    let candidates = SocketLocation.candidates(explicit: nil, readonly: false, environment: user)
    #expect(
      candidates == [
        .init(path: "/run/user/7/sectiond/control.sock", kind: .user),
        .init(path: "/run/sectiond/control.sock", kind: .system),
      ])
    let running = { (up: [String: Errno?]) in { (path: String) -> Errno? in up[path] ?? .noEntry } }
    #expect(
      try SocketLocation.choose(candidates, probe: running(["/run/user/7/sectiond/control.sock": nil])).kind
        == .user)
    #expect(
      try SocketLocation.choose(candidates, probe: running(["/run/sectiond/control.sock": nil])).kind
        == .system)
    // Permission denied on the system's is the failure worth reporting.
    #expect(throws: ClientError.cannotConnect(path: "/run/sectiond/control.sock", errno: .permissionDenied)) {
      try SocketLocation.choose(candidates, probe: running(["/run/sectiond/control.sock": .permissionDenied]))
    }
    #expect(throws: ClientError.noDaemon(paths: candidates.map(\.path))) {
      try SocketLocation.choose(candidates, probe: running([:]))
    }
    let readonly = SocketLocation.candidates(explicit: nil, readonly: true, environment: user).map(\.path)
    #expect(readonly == ["/run/user/7/sectiond/readonly.sock", "/run/sectiond/readonly.sock"])
    // Named, or for root: that one only.
    #expect(SocketLocation.candidates(explicit: "/x.sock", readonly: false, environment: user).count == 1)
    #expect(
      SocketLocation.candidates(explicit: nil, readonly: false, environment: Environment.fixture(userID: 0))
        .count == 1)
  }

  /// The read-only socket is named after the control socket, as the daemon names it.
  @Test func readonlySocketFollowsTheControlSocketsName() {
    #expect(resolve(Environment.fixture(), "/tmp/a.sock", readonly: true) == "/tmp/a.readonly.sock")
    #expect(resolve(Environment.fixture(), "/tmp/b.sock", readonly: true) == "/tmp/b.readonly.sock")
    #expect(resolve(Environment.fixture(), "/tmp/plain", readonly: true) == "/tmp/plain.readonly")
    #expect(resolve(Environment.fixture(), "/tmp/x/control.sock", readonly: true) == "/tmp/x/readonly.sock")
  }
}

/// `-l NAME`, `$SECTIOND_LIST`: the same resolution in the list's directory.
@Suite struct ListLocationTests {
  private let media = try! ListName(validating: "media")

  @Test func aListLooksInItsDirectoryOfEach() {
    let user = Environment.fixture(["XDG_RUNTIME_DIR": "/run/user/7"], userID: 7)
    #expect(
      SocketLocation.candidates(explicit: nil, readonly: false, list: media, environment: user) == [
        .init(path: "/run/user/7/sectiond/media/control.sock", kind: .user),
        .init(path: "/run/sectiond/media/control.sock", kind: .system),
      ])
    #expect(
      SocketLocation.candidates(explicit: nil, readonly: true, list: media, environment: user).map(\.path)
        == [
          "/run/user/7/sectiond/media/readonly.sock", "/run/sectiond/media/readonly.sock",
        ])
    let root = Environment.fixture(userID: 0)
    #expect(
      SocketLocation.resolve(explicit: nil, readonly: false, list: media, environment: root)
        == "/run/sectiond/media/control.sock")
  }

  /// `make run` says `export SECTIOND_SOCKET=.../.run/control.sock`; then
  /// `-l media` is `.run/media/control.sock`, where `make run ARGS='--list media'` serves it.
  @Test func aNamedSocketWinsAndAListIsBesideSectiondSocket() {
    let environment = Environment.fixture(["SECTIOND_SOCKET": "/w/.run/control.sock"], userID: 7)
    #expect(
      SocketLocation.resolve(explicit: "/x.sock", readonly: false, list: media, environment: environment)
        == "/x.sock")
    #expect(
      SocketLocation.candidates(explicit: nil, readonly: false, list: media, environment: environment) == [
        .init(path: "/w/.run/media/control.sock", kind: .given)
      ])
    #expect(
      SocketLocation.resolve(explicit: nil, readonly: true, list: media, environment: environment)
        == "/w/.run/media/readonly.sock")
    #expect(
      SocketLocation.resolve(explicit: nil, readonly: false, environment: environment)
        == "/w/.run/control.sock")
    let other = Environment.fixture(["SECTIOND_SOCKET": "/tmp/e.sock"], userID: 0)
    #expect(
      SocketLocation.resolve(explicit: nil, readonly: false, list: media, environment: other)
        == "/tmp/media/e.sock")
    #expect(SocketLocation.givenDirectory(environment: environment)?.path == "/w/.run")
    #expect(SocketLocation.givenDirectory(environment: environment)?.file == "control.sock")
  }

  @Test func sectiondListIsTheDefaultAndIsChecked() throws {
    #expect(try SocketLocation.list(explicit: nil, environment: Environment.fixture()) == nil)
    let named = Environment.fixture(["SECTIOND_LIST": "media"])
    #expect(try SocketLocation.list(explicit: nil, environment: named) == media)
    let other = try ListName(validating: "bar")
    #expect(try SocketLocation.list(explicit: other, environment: named) == other)
    let bad = Environment.fixture(["SECTIOND_LIST": "../x"])
    #expect(throws: ListName.Invalid.self) { try SocketLocation.list(explicit: nil, environment: bad) }
    // A program connecting with it learns which variable, as a value it can switch on.
    #expect(
      throws: ClientError.invalidArgument(argument: "SECTIOND_LIST", value: "../x", rule: ListName.rule)
    ) {
      _ = try AsyncClient.connect(socket: nil, readonly: false, list: nil, name: nil, environment: bad)
    }
  }

  @Test func theHintNamesTheInstanceUnit() {
    #expect(ClientError.startHint(for: "/run/sectiond/media/control.sock").contains("sectiond@media.socket"))
    #expect(
      ClientError.startHint(for: "/run/user/7/sectiond/media/readonly.sock")
        .contains("systemctl --user start sectiond-readonly@media.socket', or run sectiond --list media"))
    #expect(ClientError.startHint(for: "/run/sectiond/control.sock").contains("start sectiond.socket"))
  }
}

/// The web page's `?list=NAME`, through websocketd's QUERY_STRING.
@Suite struct QueryListTests {
  @Test func theQueryPicksTheListBesideTheSocketGiven() throws {
    let given = "/run/sectiond/readonly.sock"
    #expect(try SocketLocation.fromQuery("list=media", beside: given) == "/run/sectiond/media/readonly.sock")
    #expect(try SocketLocation.fromQuery("x=1&list=a-b", beside: given) == "/run/sectiond/a-b/readonly.sock")
    #expect(try SocketLocation.fromQuery(nil, beside: given) == given)
    #expect(try SocketLocation.fromQuery("other=1", beside: given) == given)
    for bad in ["list=../x", "list=A", "list=", "list", "list=%2e%2e"] {
      #expect(throws: ListName.Invalid.self, "\(bad)") { try SocketLocation.fromQuery(bad, beside: given) }
    }
  }
}

extension Environment {
  /// An environment with only `variables` set, for a user other than root.
  static func fixture(_ variables: [String: String] = [:], userID: UInt32 = 1000) -> Environment {
    Environment(variable: { variables[$0] }, userID: userID, outputIsTerminal: false)
  }
}
