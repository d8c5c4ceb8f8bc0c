import Etcd
import Testing

@testable import EtcdLabSupport
@testable import SectionCore
@testable import SectionFleet
@testable import SectionServer
@testable import ServerHarnessSupport

/// The outcomes only etcd decides, against three real members (Tests/System/lib/etcd_lab.py):
/// two hosts in this process, each a `Server` with its clients on socketpairs and the fleet as
/// its commit backend, their loops run by the test in turn. Host 1 reaches etcd through a gate
/// (etcd_gate.py) that holds what it sends, or what etcd answers, so that its commit loses its
/// compare, or its answer never comes, for certain. fleet-retry.py covers the same paths with
/// the real binaries; here the assertions reach the hosts' state. One lab per test, the tests
/// one at a time: each lab is three etcd processes.
@Suite(.serialized) struct FleetEtcdTests {
  /// A change is answered within 10 s whatever etcd does (docs/FLEET.md, "Failures"); the rest
  /// is for a loaded machine.
  static let answerWithin = 20.0

  /// The TOGGLE, run again on the newer state, closes what host 0 opened meanwhile: the first
  /// txn lost its compare, the host caught up, and the kept request ran again.
  @Test func aLostCompareRunsTheToggleAgainOnTheNewerState() throws {
    guard let fleet = try TwoHosts() else { return }
    let client = try fleet.hosts[1].harness.connect()
    let theirs = try fleet.loseCompare(sending: { try client.send("TOGGLE a\n") }, to: "OPEN a")
    #expect(theirs == "OK 1")
    #expect(try fleet.run(until: { client.hasReplies(1) }))
    #expect(client.lines == ["section 0 a closed 0 A", "OK 2"])
    // Two commits of host 1's: the one that lost, and the request's run again.
    #expect(fleet.hosts[1].fleet.counter == 2)
    try fleet.expectConverged(at: 2, open: [])
    #expect(try fleet.log() == [.init(1, "h0"), .init(2, "h1")])
  }

  /// A TOGGLE and a BATCH behind it arrive together while the TOGGLE's group is held for
  /// etcd; after the lost compare both run again, in order, the batch all or none: ended in
  /// the same read, or with its END sent while the group is held.
  @Test func aBatchBegunBehindAHeldGroupRunsAgainAfterIt() throws {
    guard let fleet = try TwoHosts() else { return }
    var base: UInt64 = 0
    for endSentWhileHeld in [false, true] {
      let what = "END sent while held: \(endSentWhileHeld)"
      let client = try fleet.hosts[1].harness.connect()
      let batch = "TOGGLE a\nBATCH\nTOGGLE b\nTOGGLE c\n"
      let theirs = try fleet.loseCompare(
        sending: { try client.send(batch + (endSentWhileHeld ? "" : "END\n")) }, to: "TOGGLE a",
        meanwhile: { if endSentWhileHeld { try client.send("END\n") } })
      #expect(theirs == "OK \(base + 1)", "\(what)")
      #expect(try fleet.run(until: { client.hasReplies(2) }))
      // Host 0 opened a first: the TOGGLE closes it, then the batch opens b and c.
      #expect(client.lines == ["section 0 a closed 0 A", "OK \(base + 2)", "OK \(base + 4)"], "\(what)")
      try fleet.expectConverged(at: base + 4, open: ["b", "c"])
      // Closed again for the next round, from host 0.
      #expect(try fleet.change(on: 0, "CLOSE b\nCLOSE c\n").filter { $0.hasPrefix("OK") }.count == 2)
      base += 6
      try fleet.expectConverged(at: base, open: [])
    }
    // Each round: host 0's TOGGLE, host 1's TOGGLE and batch, host 0's CLOSEs, in one entry
    // or more each (a group ends where a turn does).
    let hosts = try fleet.log().map(\.host)
    #expect(
      zip(hosts, hosts.dropFirst()).filter { $0 != $1 }.map(\.1) == ["h1", "h0", "h1", "h0"]
        && hosts.first == "h0",
      "\(hosts)")
  }

  /// A bus call whose group lost its compare: its request, kept with the call, runs again on
  /// the newer state, and the caller's one return says what it did there (Toggle of the
  /// section host 0 opened meanwhile: closed) at the revision it took.
  @Test(
    .enabled(
      if: ServerHarness.busToolsPresent,
      "needs dbus-daemon and /usr/bin/python3 with python3-gi (scripts/deps.sh --test)"))
  func aLostCompareRunsTheBusCallAgainOnTheNewerState() throws {
    guard let fleet = try TwoHosts() else { return }
    try fleet.hosts[1].harness.withCaller { caller in
      // The caller's first call toggles c.
      let theirs = try fleet.loseCompare(sending: {}, to: "OPEN c")
      #expect(theirs == "OK 1")
      #expect(try fleet.run(until: { try caller.answers().count == 1 }))
      #expect(try caller.answers() == ["False 2"])
    }
    #expect(fleet.hosts[1].fleet.counter == 2)
    try fleet.expectConverged(at: 2, open: [])
    #expect(try fleet.log() == [.init(1, "h0"), .init(2, "h1")])
  }

  /// etcd's answer to a committed txn never comes (the gate holds it past the attempt's 2 s),
  /// and the host's watch, which would have shown the entry first, is stopped: the host fences
  /// the head, finds it moved, and finds its own entry in the log by its commit id. The
  /// TOGGLE counts once: answered `open`, not run again (which would close a again).
  @Test func anUnknownOutcomeIsFoundByItsID() throws {
    guard let fleet = try TwoHosts() else { return }
    let host = fleet.hosts[1]
    host.fleet.watch?.cancel()
    host.fleet.watch = nil
    // The poll would start the watch again, and the catch-up with it.
    host.fleet.poller?.setEnabled(false)
    try fleet.gate.holdAnswers("response_put")
    defer { try? fleet.gate.open() }
    let client = try host.harness.connect()
    try client.send("TOGGLE a\n")
    #expect(try fleet.run(until: { client.hasReplies(1) }))
    #expect(client.lines == ["section 0 a open 0 A", "OK 1"])
    #expect(host.fleet.counter == 1, "one commit: the group whose answer was lost was not run again")
    try fleet.expectConverged(at: 1, open: ["a"])
    #expect(try fleet.log() == [.init(1, "h1")])
  }

  /// A group committed through a real txn is committed at the revision it took: the client
  /// hears it, etcd's head and log name it, and the other host applies it. Then etcd refuses
  /// writes for want of space (its NOSPACE alarm, as at its quota): a group is refused late,
  /// when etcd answers its txn, undone here and applied on no host; once the alarm is
  /// disarmed, changes commit again.
  @Test func aCommitIsCommittedAtItsRevisionOrRefusedByEtcd() throws {
    guard let fleet = try TwoHosts() else { return }
    #expect(try fleet.change(on: 0, "TOGGLE a\n") == ["section 0 a open 0 A", "OK 1"])
    try fleet.expectConverged(at: 1, open: ["a"])
    #expect(try fleet.head().hasPrefix("1 "))
    #expect(try fleet.log() == [.init(1, "h0")])

    try fleet.lab.noSpace(true)
    let refused = try fleet.change(on: 0, "TOGGLE b\n")
    #expect(refused.count == 1, "no section line for a change refused: \(refused)")
    #expect(refused.last?.hasPrefix("ERR UNAVAILABLE etcd is out of space") == true, "\(refused)")
    // The refusal undoes the group: reads are served from the revision before it.
    #expect(refused.last?.contains("reads are served from revision 1") == true, "\(refused)")
    try fleet.expectConverged(at: 1, open: ["a"])
    #expect(try fleet.log() == [.init(1, "h0")])

    try fleet.lab.noSpace(false)
    // The poll finds the alarm gone within its 2 s; until then changes are refused at once.
    #expect(try fleet.run(until: { fleet.hosts[0].fleet.outOfSpace == nil }))
    #expect(try fleet.change(on: 0, "TOGGLE b\n") == ["section 1 b open 0 B", "OK 2"])
    try fleet.expectConverged(at: 2, open: ["a", "b"])
  }
}

/// One host of the fleet in this process: a server on a state file of its own, the fleet its
/// commit backend, started as sectiond-fleet starts it.
final class FleetHost {
  let harness: ServerHarness
  let fleet: Fleet

  init(_ name: String, members: [String]) throws {
    harness = try ServerHarness()
    let options = try #require(
      try EtcdOptions.make(
        etcd: members.joined(separator: ","), prefix: "/t/", host: name, caFile: nil, certificateFile: nil,
        keyFile: nil, credentialsFile: nil, list: nil, environment: { _ in nil }))
    harness.service.host = Array(name.utf8)
    fleet = try Fleet(options: options, server: harness.server)
    harness.server.backend = fleet
    _ = try fleet.start()
  }

  deinit { fleet.stop() }

  /// Joined: idle, and taking changes.
  var isServing: Bool { fleet.phase == .idle && fleet.gate.refusal == nil && !fleet.fleetID.isEmpty }
}

/// Two hosts on one lab: host 0 on every member, host 1 through a gate in front of member 0.
/// Host 0 seeds the fleet with sections a, b and c, all closed; host 1 joins it.
final class TwoHosts {
  let lab: EtcdLab
  let gate: EtcdGate
  let hosts: [FleetHost]
  /// The test's own client of etcd, on a loop of its own, to read the keys.
  private let reader: LoopRunner
  private let client: EtcdClient

  init?() throws {
    guard let lab = try EtcdLab() else { return nil }
    self.lab = lab
    gate = try EtcdGate(lab.urls[0])
    reader = try LoopRunner()
    client = try EtcdClient(loop: reader.loop, configuration: .init(members: lab.urls))
    // Host 0 seeds before host 1 starts, so that host 1 joins its fleet.
    let first = try FleetHost("h0", members: lab.urls)
    guard try first.harness.run(until: { first.isServing }) else {
      throw EtcdLabFailure("host 0 did not seed the fleet: \(first.fleet.statusFields)")
    }
    hosts = [first, try FleetHost("h1", members: [gate.url])]
    guard try run(until: { self.hosts[1].isServing }) else {
      throw EtcdLabFailure("host 1 did not join the fleet: \(hosts[1].fleet.statusFields)")
    }
  }

  /// Runs both hosts' loops, an iteration each in turn, until `condition` holds; false when
  /// `timeout` seconds passed first.
  func run(until condition: () throws -> Bool, timeout: Double = FleetEtcdTests.answerWithin) throws -> Bool {
    try hosts[0].harness.run(until: condition, timeout: timeout, between: { try hosts[1].harness.iterate() })
  }

  /// Host 1's commit held at the gate (`sending` makes it, or a bus call on its way) while
  /// host 0 commits `change` (after `meanwhile`); then the gate opens, and host 1's txn goes on
  /// to lose its compare. Host 0's status line.
  func loseCompare(sending: () throws -> Void, to change: String, meanwhile: () throws -> Void = {})
    throws -> String
  {
    try gate.shut()
    defer { try? gate.open() }
    try sending()
    guard try hosts[1].harness.run(until: { try gate.holds("request_put") }) else {
      throw EtcdLabFailure("host 1's commit did not reach the gate")
    }
    try meanwhile()
    let theirs = try self.change(on: 0, change + "\n")
    try gate.open()
    return String(theirs.last ?? "")
  }

  /// The lines of `host`'s replies to `requests`, sent on a new connection: as many replies as
  /// lines sent.
  func change(on host: Int, _ requests: String) throws -> [Substring] {
    let client = try hosts[host].harness.connect()
    try client.send(requests)
    let count = requests.split(separator: "\n").count
    guard try run(until: { client.hasReplies(count) }) else {
      throw EtcdLabFailure("host \(host) did not answer \(requests): \(client.lines)")
    }
    return client.lines
  }

  /// Both hosts at `revision`, with `open` open in what each saved.
  func expectConverged(
    at revision: UInt64, open: Set<String>, sourceLocation: SourceLocation = #_sourceLocation
  )
    throws
  {
    let converged = try run(until: {
      hosts.allSatisfy { $0.harness.service.model.revision == revision && !$0.fleet.isBusy }
    })
    #expect(
      converged, "revisions \(hosts.map { $0.harness.service.model.revision }), not \(revision)",
      sourceLocation: sourceLocation)
    for (index, host) in hosts.enumerated() {
      #expect(try host.harness.savedOpen() == open, "host \(index)", sourceLocation: sourceLocation)
    }
  }

  /// The head's value in etcd.
  func head() throws -> String {
    let answer = try reader.wait { client.range(RangeRequest(key: hosts[0].fleet.headKey), completion: $0) }
    return String(decoding: try #require(try answer.get().kvs.first).value, as: UTF8.self)
  }

  struct Entry: Equatable, CustomStringConvertible {
    let revision: UInt64
    let host: String
    init(_ revision: UInt64, _ host: String) {
      self.revision = revision
      self.host = host
    }
    var description: String { "\(revision) by \(host)" }
  }

  /// The fleet's log in etcd, entry by entry, each checked against its key.
  func log() throws -> [Entry] {
    let fleet = hosts[0].fleet
    let answer = try reader.wait { client.range(.prefix(fleet.logPrefix), completion: $0) }
    return try answer.get().kvs.map { kv in
      let entry = try FleetEntry.decode(kv.value)
      #expect(fleet.logRevision(kv.key) == entry.revision)
      return Entry(entry.revision, entry.host)
    }
  }
}
