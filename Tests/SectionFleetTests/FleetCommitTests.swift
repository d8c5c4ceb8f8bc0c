import Testing

@testable import SectionCore
@testable import SectionFleet
@testable import SectionServer
@testable import Systemd

/// The fleet as a commit backend, for the outcomes it knows without asking etcd: a group it
/// cannot send is refused at once (`CommitOutcome.refused`), and nothing is left under way.
/// The outcomes etcd decides (committed, retry, refused late) are `FleetEtcdTests`', against
/// real members.
@Suite struct FleetCommitTests {
  /// A host on no etcd at all (port 9, discard): nothing here sends a request.
  func host() throws -> (Fleet, Server) {
    let config = Config(
      mode: .multi,
      sections: ["a", "b"].map { Section(id: $0, title: $0.uppercased(), items: [], initiallyOpen: false) })
    let service = SectionService(
      model: SectionModel(config: config, saved: nil), history: History(capacity: 100))
    let server = try Server(
      loop: try EventLoop(), service: service, store: nil, limits: ClientLimits(total: 4, readOnly: 4),
      connectionStore: nil, loadConfig: { config })
    let options = try #require(
      try EtcdOptions.make(
        etcd: "http://127.0.0.1:9", prefix: nil, host: "h1", caFile: nil, certificateFile: nil, keyFile: nil,
        credentialsFile: nil, list: nil, environment: { _ in nil }))
    let fleet = try Fleet(options: options, server: server)
    server.backend = fleet
    return (fleet, server)
  }

  /// A TOGGLE sent to `server`'s service, as a client's line: its reply. Made, it is the
  /// unsaved group a turn would hand the backend.
  @discardableResult
  func toggle(on server: Server) -> String {
    var session = Session(access: .control, author: Author(via: .socket, uid: nil, pid: nil))
    var batch: Batch?
    var reply = OutputQueue()
    _ = server.service.handle(Array("TOGGLE a".utf8)[...], session: &session, batch: &batch, reply: &reply)
    return String(decoding: reply.unsentBytes, as: UTF8.self)
  }

  /// While the host refuses changes (etcd known unreachable), a group handed to it is refused
  /// at once with that refusal, and no commit is under way.
  @Test func aGroupWhileChangesAreRefusedIsRefusedAtOnce() throws {
    let (fleet, server) = try host()
    toggle(on: server)
    let refusal = ProtocolError(.unavailable, "etcd: no member answers")
    fleet.gate.refusal = refusal
    #expect(fleet.commit(server.service.unsavedGroup, of: server.service) == .refused(refusal))
    #expect(!fleet.isCommitting)
  }

  /// The gate the service reads is the fleet's: a refusal the fleet sets refuses the next
  /// change before it reaches the list.
  @Test func theServiceReadsTheFleetsGate() throws {
    let (fleet, server) = try host()
    #expect(server.service.gate === fleet.gate)
    fleet.gate.refusal = ProtocolError(.unavailable, "not joined")
    #expect(toggle(on: server) == "ERR UNAVAILABLE not joined\n")
    #expect(!server.service.hasUnsavedChanges)
  }
}
