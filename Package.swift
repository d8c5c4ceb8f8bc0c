// swift-tools-version:6.0
import PackageDescription

/// Release builds of the request path skip Swift's run-time exclusivity checks: callgrind put
/// them at a sixth of a TOGGLE's instructions. Debug builds, which every test runs, keep them,
/// and the compile-time checks stay on everywhere.
let hotPath: [SwiftSetting] = [
  .unsafeFlags(["-enforce-exclusivity=unchecked"], .when(configuration: .release))
]

/// The release daemon is linked for a small resident set (issue 5 asks for at most 8 MiB idle).
/// Linux maps code 64 KiB around each page touched, so what counts is how widely the code that
/// runs is spread: lld puts the functions listed in sectiond.order (scripts/order-file.py
/// records them) side by side, and packs the 15,000 relative relocations of the PIE into a few
/// KiB (DT_RELR, glibc 2.36 or later). Measured idle: 7.4-8.1 MiB before, 6.1-6.5 MiB after.
let packageRoot = String(#filePath.dropLast("/Package.swift".count))
let compactDaemon: [LinkerSetting] = [
  .unsafeFlags(
    [
      "-use-ld=lld",
      "-Xlinker", "-z", "-Xlinker", "pack-relative-relocs",
      "-Xlinker", "--symbol-ordering-file=\(packageRoot)/Sources/sectiond/sectiond.order",
      "-Xlinker", "--no-warn-symbol-ordering",
    ], .when(configuration: .release))
]

/// Both release binaries link with -z now (full RELRO: the GOT is read-only once loaded,
/// Debian's hardening=+bindnow, lintian's hardening-no-bindnow). Measured idle RSS of the
/// daemon: 6.26-6.46 MiB without it, 6.42-6.48 MiB with it.
let bindNow: LinkerSetting = .unsafeFlags(
  ["-Xlinker", "-z", "-Xlinker", "now"], .when(configuration: .release))

let package = Package(
  name: "sectiond",
  products: [
    .executable(name: "sectiond", targets: ["sectiond"]),
    .executable(name: "sectiond-fleet", targets: ["sectiond-fleet"]),
    .executable(name: "sectionctl", targets: ["sectionctl"]),
    .library(name: "SectionClient", targets: ["SectionClient"]),
  ],
  targets: [
    // libsystemd, through pkg-config. Only the `Systemd` module imports it.
    .systemLibrary(
      name: "CSystemd", pkgConfig: "libsystemd", providers: [.apt(["libsystemd-dev"])]),
    // libedit's readline interface, through pkg-config: line editing and history for `sectionctl shell`.
    .systemLibrary(name: "CEdit", pkgConfig: "libedit", providers: [.apt(["libedit-dev"])]),
    // sectiond's sd-bus vtable, written with sd-bus's C macros (Swift cannot spell them).
    .target(name: "CSystemdBus", linkerSettings: [.linkedLibrary("systemd")]),
    // The few libc calls Swift cannot reach without _GNU_SOURCE (accept4, SO_PEERCRED).
    .target(name: "CShim", cSettings: [.define("_GNU_SOURCE")]),
    // Typed wrappers over every raw POSIX call the project makes.
    .target(name: "Posix", dependencies: ["CShim"]),
    // What the daemon and the library share: the mode, list, socket and client names and
    // their rules; and, public for any program, what the daemon and sectionctl both use (JSON,
    // the history's time format, the id rule). No unsafe flags, so that a package can depend
    // on SectionClient by url (SwiftPM refuses a remote product whose targets have any).
    .target(name: "SectionShared"),
    // The grammar of protocol 1, one row per verb: what the daemon's parser and HELP, the
    // client's requests and sectionctl's help and completions are made from. No unsafe flags,
    // as SectionShared, since SectionClient depends on it.
    .target(name: "SectionGrammar", dependencies: ["SectionShared"]),
    // The model, the config, the protocol: pure, no I/O.
    .target(name: "SectionCore", dependencies: ["SectionShared", "SectionGrammar"], swiftSettings: hotPath),
    // The one place that calls libsystemd: sd-event, sd_notify, socket activation, sd-bus.
    .target(name: "Systemd", dependencies: ["CSystemd", "CSystemdBus", "Posix"]),
    // libcurl, loaded with dlopen on first use (a sectiond without --etcd maps none of it),
    // with typed wrappers for its variadic setters. The headers come from libcurl4-openssl-dev.
    .target(name: "CCurl"),
    // The one place that calls libcurl: a client of etcd's v3 JSON gateway on the sd-event loop.
    .target(name: "Etcd", dependencies: ["CCurl", "SectionShared", "Systemd", "Posix"]),
    // The daemon's I/O layer: listeners, connections, the state file, the command line. Not on
    // Etcd: a sectiond without --etcd maps none of the fleet's code (it execs sectiond-fleet).
    .target(
      name: "SectionServer", dependencies: ["SectionCore", "Posix", "Systemd"], swiftSettings: hotPath),
    // A host's part in a fleet (--etcd, docs/FLEET.md): the list's truth in etcd, behind
    // SectionServer's `CommitBackend`. Only sectiond-fleet links it.
    .target(
      name: "SectionFleet", dependencies: ["SectionServer", "SectionCore", "Etcd", "Posix", "Systemd"],
      swiftSettings: hotPath),
    // The client side of protocol 1: the library programs (and sectionctl) use to talk to sectiond.
    // Not on SectionCore: a program gets the library and what it shares with the daemon.
    .target(name: "SectionClient", dependencies: ["Posix", "SectionShared", "SectionGrammar"]),
    // The sectionctl command line, on SectionClient (not on SectionCore: one Request, one
    // Connection in sight).
    // packageAccess: false: sectionctl is built on the library's public API alone, as mpc is
    // on libmpdclient's headers, so that its main user proves that API (client-library.sh
    // checks that a package declaration is out of its reach).
    .target(
      name: "SectionCtl",
      dependencies: ["SectionClient", "SectionShared", "SectionGrammar", "Posix", "CEdit"],
      packageAccess: false),
    .executableTarget(
      name: "sectiond", dependencies: ["SectionServer"], exclude: ["sectiond.order"],
      linkerSettings: compactDaemon + [bindNow]),
    // sectiond with the fleet: what `sectiond --etcd` execs, in the same process. Two binaries,
    // not a plugin: the releases link the Swift runtime statically, and a dlopen'd Swift
    // library would bring a second one. The order file is sectiond's, harmless here (the
    // functions it names are the same server's) and it keeps the fleet host's start compact.
    .executableTarget(
      name: "sectiond-fleet", dependencies: ["SectionFleet", "SectionServer", "Posix"],
      linkerSettings: compactDaemon + [bindNow]),
    .executableTarget(
      name: "sectionctl", dependencies: ["SectionCtl"], packageAccess: false, linkerSettings: [bindNow]),
    // The bench's load generator on SectionClient (bench/bench.py's client_* scenarios).
    .executableTarget(name: "client-load", dependencies: ["SectionClient", "Posix"], swiftSettings: hotPath),
    // SectionShared's rules on their own: names, ids, socket paths, the history's time, JSON.
    .testTarget(name: "SectionSharedTests", dependencies: ["SectionShared"]),
    // The wrappers' own logic without privileges: EINTR and EAGAIN, errors naming the call,
    // file and socket-directory checks; sd-event's sources.
    .testTarget(name: "PosixTests", dependencies: ["Posix"]),
    .testTarget(name: "SystemdTests", dependencies: ["Systemd", "Posix"]),
    // With SectionFleet for its log entry's codec (FleetEntry), which FleetTests applies here.
    .testTarget(name: "SectionCoreTests", dependencies: ["SectionCore", "SectionGrammar", "SectionFleet"]),
    // The grammar's table against the daemon's parser and the client's requests: every row
    // parses, and every request the library makes is a line the daemon accepts.
    .testTarget(
      name: "SectionGrammarTests", dependencies: ["SectionGrammar", "SectionCore", "SectionClient"]),
    .testTarget(name: "SectionCtlTests", dependencies: ["SectionCtl", "SectionClient"]),
    .testTarget(name: "SectionClientTests", dependencies: ["SectionClient"]),
    .testTarget(name: "IntegrationTests", dependencies: ["Posix", "SectionClient"]),
    // Test support, not tests: what several test targets share. Each reaches its modules'
    // internals (@testable), which only a build for testing (debug, as `swift test` builds)
    // allows, so a release build compiles them empty.
    // Three etcd members for a test (Tests/System/lib/etcd_lab.py), a gate in front of one
    // (etcd_gate.py), and an sd-event loop run by the test until a call completes.
    .target(
      name: "EtcdLabSupport", dependencies: ["Etcd", "Systemd", "CSystemd", "Posix"],
      path: "Tests/Support/EtcdLabSupport"),
    // A server in the test's process, its clients on socketpairs, its loop run by the test.
    .target(
      name: "ServerHarnessSupport",
      dependencies: ["SectionServer", "SectionCore", "Systemd", "Posix", "CSystemd"],
      path: "Tests/Support/ServerHarnessSupport"),
    // The etcd client against three etcd members started by the test (Tests/System/lib/etcd_lab.py).
    .testTarget(
      name: "EtcdTests",
      dependencies: ["Etcd", "EtcdLabSupport", "Systemd", "CSystemd", "Posix", "SectionCore"]),
    // The fleet's logic: its phase's transition function and the outcomes of a commit it knows
    // without asking etcd; and, against three real etcd members, hosts in the test's process
    // whose commits etcd decides (committed, refused, a lost compare run again, an outcome
    // unknown and found by its id).
    .testTarget(
      name: "SectionFleetTests",
      dependencies: [
        "SectionFleet", "SectionServer", "SectionCore", "Etcd", "Systemd", "EtcdLabSupport",
        "ServerHarnessSupport",
      ]),
    // The server in this process, its clients on socketpairs, its loop run by the test.
    .testTarget(
      name: "SectionServerTests",
      dependencies: ["SectionServer", "SectionCore", "Systemd", "Posix", "CSystemd", "ServerHarnessSupport"]),
  ],
  swiftLanguageModes: [.v6]
)
