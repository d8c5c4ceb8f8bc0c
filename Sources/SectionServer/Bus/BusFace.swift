import Glibc
import Posix
import SectionCore
import Systemd

/// sectiond on D-Bus (docs/DBUS.md): the object `/org/sectiond/Sectiond1` under the name
/// `org.sectiond.Sectiond1` (a named list: `org.sectiond.Sectiond1.NAME`, the same object and
/// interface, as MPRIS does it), a peer of the control socket.
///
/// A method call becomes the `Request` value it stands for, with a `Session` of its caller, and
/// enters where a socket's parsed request enters (`Server.answer`, `SectionService.execute`),
/// answered as values; a change's return waits, as a socket's `OK` does, for the
/// group commit (`Server.save`), which hands the face the saved changes: their signals, one
/// PropertiesChanged for the group, then the returns. One code path for durability,
/// revisions and access, whichever face a change came in on.
final class BusFace {
  static let path = "/org/sectiond/Sectiond1"
  static let interface = "org.sectiond.Sectiond1"
  static let propertiesInterface = "org.freedesktop.DBus.Properties"

  unowned let server: Server
  var bus: Bus!
  var access: BusAccess
  /// Saved, to be answered by `publish()` with the signals of `unpublished`. The calls that
  /// wait for the save, or for other changes' save, are the turn's (`Server.turn`), beside
  /// the socket connections that wait for it.
  private var answering: [HeldCall] = []
  /// The saved changes whose signals are not sent yet, and the ids of the sections they name.
  private var unpublished: [Change] = []
  private var unpublishedIDs: [String?] = []
  /// Calls of callers whose uid and groups the bus daemon has been asked for, or for the
  /// first of which polkit has been asked, in the order they came, by sender.
  private var waiting: [String: [(BusCall, BusRequest)]] = [:]
  /// The most calls of one caller held while it is asked about: the system bus lets a
  /// caller have 128 calls unanswered, a session bus more.
  static let heldPerCaller = 1024

  /// A call answered once its change is saved.
  struct HeldCall {
    let call: BusCall
    /// Its request and the access it ran with: run again as they are if the group comes back
    /// as a retry (`CommitOutcome.retry`).
    let request: BusRequest
    let access: SectionService.Access
    let revision: UInt64
    /// Toggle's answer: whether the section is open now.
    let open: Bool
    var answer: BusRequest.Answer { request.answer }
  }

  /// A call handled again once the save it waits for is done (or refused).
  struct WaitingCall {
    let call: BusCall
    /// The request read from it and the access it runs with, when it is one of the interface's
    /// methods: run again as they are. Nil for a property's Get or Set, read from the call again.
    let request: (BusRequest, SectionService.Access)?
  }

  init(_ kind: Bus.Kind, name: String, server: Server) throws {
    self.server = server
    access = BusAccess()
    bus = Bus(
      kind, name: name, path: BusFace.path, interface: BusFace.interface, loop: server.loop,
      handlers: Bus.Handlers(
        method: { [unowned self] call in self.handle(call) },
        property: { [unowned self] name, writer in try self.append(property: name, to: &writer) },
        intercept: { [unowned self] call in self.intercept(call) },
        log: { message, isProblem in
          isProblem ? Log.warning("D-Bus: \(message)") : Log.notice("D-Bus: \(message)")
        },
        connected: { [unowned self] in
          // Calls from the last connection cannot be answered on this one.
          self.access.forget()
          self.waiting.removeAll()
        }
      ))
  }

  /// Writes what is queued and leaves the bus: the daemon is stopping.
  func close() {
    publish()
    bus.close()
  }

  // MARK: Calls

  /// A method call of the interface: read into its request, checked, then executed.
  private func handle(_ call: BusCall) {
    do throws(ProtocolError) {
      let request = try BusRequest(call, batchLines: server.batchLines)
      if request.answer.isRead, refuseWhileBehind(call) { return }
      run(call, request)
    } catch {
      answer(call, error)
    }
  }

  /// While the bus daemon has not taken all that was sent to it (its callers do not read
  /// their answers), a read whose answer is long (List, Items, the Sections and
  /// OpenSections properties) is refused with a short error instead: its answer would wait
  /// in sectiond's memory, one more for every such call. Short answers still go out, so
  /// other callers' changes and Get of Mode and Revision are served meanwhile.
  func refuseWhileBehind(_ call: BusCall) -> Bool {
    guard bus.isWriteBehind else { return false }
    send(
      error: "org.freedesktop.DBus.Error.LimitsExceeded",
      "sectiond's answers wait for the bus to take them, so long ones are refused now: try again shortly",
      to: call)
    return true
  }

  /// Runs `request` once its sender's right to it is known: a change from a caller not seen
  /// before waits for the bus daemon to say who it is, and a change of a caller without a
  /// direct right (`BusAccess`) waits for polkit's decision; that caller's further calls wait
  /// behind it, in order. The loop serves everyone else meanwhile.
  func run(_ call: BusCall, _ request: BusRequest) {
    let sender = call.sender
    if waiting[sender] != nil {
      guard waiting[sender]!.count < BusFace.heldPerCaller else {
        return send(
          error: "org.freedesktop.DBus.Error.LimitsExceeded",
          "\(BusFace.heldPerCaller) calls of yours wait already for the bus daemon or polkit to decide: try again shortly",
          to: call)
      }
      waiting[sender]!.append((call, request))
      return
    }
    if case .run(let access) = step(sender, request) { return execute(call, request, access: access) }
    waiting[sender] = [(call, request)]
    proceed(sender)
  }

  /// What a call needs before it runs.
  private enum Step {
    /// It runs now, with this access.
    case run(SectionService.Access)
    /// The bus daemon is to say who the caller is.
    case askCredentials
    /// polkit is to decide whether the caller may act at this level.
    case askPolkit(AccessLevel)
  }

  private func step(_ sender: String, _ request: BusRequest) -> Step {
    // A read that names no one needs no right.
    guard request.changesState || request.answer.showsWho else { return .run(.control) }
    guard let direct = access.mayChange(sender) else { return .askCredentials }
    if direct { return .run(.control) }
    // Who made the changes is shown to callers with a direct right only, as before polkit.
    guard request.changesState else { return .run(.readOnly) }
    return .askPolkit(request.level)
  }

  /// Runs the waiting calls of `sender` in order, up to one that waits for an answer.
  private func proceed(_ sender: String) {
    while let (call, request) = waiting[sender]?.first {
      switch step(sender, request) {
      case .run(let access):
        waiting[sender]!.removeFirst()
        execute(call, request, access: access)
      case .askCredentials:
        do {
          try call.askSenderCredentials { [unowned self] credentials in self.decided(sender, credentials) }
        } catch {
          access.decide(sender, .failure(error))
          continue
        }
        return
      case .askPolkit(let level):
        do {
          try call.checkAuthorization(BusAccess.action(level)) { [unowned self] answer in
            self.authorized(call, level, answer)
          }
        } catch {
          authorized(call, level, .failure(error))
        }
        return
      }
    }
    waiting[sender] = nil
  }

  /// The bus daemon said who `sender` is (or could not): its calls that waited run, in order.
  private func decided(_ sender: String, _ credentials: Result<BusCredentials, any Error>) {
    access.decide(sender, credentials)
    proceed(sender)
  }

  /// polkit decided whether `call`, the first of its caller's waiting calls, may act at
  /// `level`: it runs at that level, or is refused changing nothing, and the caller's next
  /// calls follow. Without polkit it runs as it did before polkit was asked: on the direct
  /// right alone, which the caller lacks (`READONLY`, AccessDenied).
  private func authorized(_ call: BusCall, _ level: AccessLevel, _ answer: Result<PolkitAnswer, any Error>) {
    let sender = call.sender
    guard let (first, request) = waiting[sender]?.first, first === call else { return }
    waiting[sender]!.removeFirst()
    switch access.granted(sender, answer) {
    case .authorized: execute(call, request, access: SectionService.Access(level: level))
    case .absent: execute(call, request, access: .readOnly)
    case .challenge:
      send(
        error: "org.freedesktop.DBus.Error.InteractiveAuthorizationRequired",
        "\(call.member) needs \(BusAccess.action(level)), for which polkit asks you to authenticate:"
          + " call again allowing interactive authorization (busctl does by default; gdbus call --interactive)",
        to: call)
    case .notAuthorized:
      let author = access.author(sender)
      server.denials.note(
        "D-Bus: refused \(call.member) of uid \(author.uid.map(String.init) ?? "?"), pid \(author.pid.map(String.init) ?? "?") (\(sender)): polkit does not grant \(BusAccess.action(level))"
      )
      send(error: ProtocolError.Code.denied.busName, BusAccess.refusal(call.member, needs: level), to: call)
    }
    proceed(sender)
  }

  /// Executes `request` in a session of the caller (its access, and who it is for the
  /// history), then answers, holds the call for the save, or keeps it for after the save of
  /// other changes its answer would show.
  private func execute(_ call: BusCall, _ request: BusRequest, access: SectionService.Access) {
    var session = Session(access: access, author: self.access.author(call.sender))
    var batch = request.batch
    switch server.answer(request.request, session: &session, batch: &batch) {
    case .failure(let error):
      answer(call, error)
    case .success(let done) where done.outcome == .deferred:
      server.waitForSave(WaitingCall(call: call, request: (request, access)))
    case .success(let done) where done.outcome == .changed:
      server.holdForSave(
        HeldCall(call: call, request: request, access: access, revision: done.revision, open: done.open))
    case .success(let done) where request.answer.showsWho:
      do {
        try call.reply { writer in
          try BusHistory.write(request.answer, done.changes, revision: done.revision, to: &writer)
        }
      } catch let error as ProtocolError {
        answer(call, error)
      } catch {
        Log.debug("D-Bus: a reply to \(call.sender) was not sent: \(error)")
      }
    case .success(let done):
      send(call) { writer in
        try self.write(
          request.answer, revision: done.revision, open: done.open, section: done.section, to: &writer)
      }
    }
  }

  /// Writes the return values of a call that succeeded; `section`: the one Items named.
  private func write(
    _ answer: BusRequest.Answer, revision: UInt64, open: Bool, section: Int? = nil, to writer: inout BusWriter
  ) throws {
    switch answer {
    case .nothing, .history, .changedBy: break
    case .revision: try writer.append(revision)
    case .toggled:
      try writer.append(open)
      try writer.append(revision)
    case .list:
      try writer.append(revision)
      try appendSections(to: &writer)
    case .items:
      try writer.append(revision)
      try writer.append(section.map { server.model.sections[$0].items } ?? [])
    }
  }

  func answer(_ call: BusCall, _ error: ProtocolError) {
    do {
      try call.replyError(error.code.busName, error.message)
    } catch {
      Log.debug("D-Bus: an error reply to \(call.sender) was not sent: \(error)")
    }
  }

  func send(_ call: BusCall, _ body: (inout BusWriter) throws -> Void) {
    do {
      try call.reply(body)
    } catch {
      Log.debug("D-Bus: a reply to \(call.sender) was not sent: \(error)")
    }
  }

  // MARK: After the save

  /// The group commit saved `group`, `model` being the state after it: the signals of its
  /// changes and the returns of the calls that made them go out with `publish()`, once the
  /// socket clients' replies are written (a signal costs a write to the bus daemon, and the
  /// socket's replies need not wait for it).
  func saved(_ group: SavedGroup, after model: SectionModel) {
    unpublished.append(contentsOf: group.changes)
    unpublishedIDs.append(contentsOf: group.sectionIDs(after: model))
  }

  /// The calls whose changes were just saved (`Server.releaseWaiting`): answered by
  /// `publish()`, after the signals of those changes.
  func answerAfterSignals(_ calls: [HeldCall]) {
    answering.append(contentsOf: calls)
  }

  /// The end of the loop turn: the saved groups' signals, one PropertiesChanged, then the
  /// returns of the calls that made the changes, in that order (a caller sees its change's
  /// signal first).
  func publish() {
    guard !unpublished.isEmpty || !answering.isEmpty else { return }
    do {
      try bus.propertiesChanged(BusEvent.publish(unpublished, ids: unpublishedIDs, on: bus))
    } catch {
      Log.warning("D-Bus: signals of revision \(server.model.revision) not sent: \(error)")
    }
    unpublished.removeAll(keepingCapacity: true)
    unpublishedIDs.removeAll(keepingCapacity: true)
    for held in answering {
      send(held.call) { writer in
        try self.write(held.answer, revision: held.revision, open: held.open, to: &writer)
      }
    }
    answering.removeAll(keepingCapacity: true)
  }

  /// Right after the save (or its refusal), where the socket's waiting requests are handled
  /// (`Server.handleReleased`), and before them: the calls that waited for it, in order.
  /// Handled then, before any client makes another change, a read waits for one save only,
  /// however many clients flood changes; on a later turn, new changes would defer it again.
  /// The saved group's signals and returns go out first, so that no answer shows a revision
  /// whose signal has not been sent.
  func handleReleased(_ calls: [WaitingCall]) {
    publish()
    for waiting in calls {
      let call = waiting.call
      if let (request, access) = waiting.request {
        if request.answer.isRead, refuseWhileBehind(call) { continue }
        execute(call, request, access: access)
        continue
      }
      call.rewind()
      if call.isMethodCall(interface: BusFace.propertiesInterface, member: "Get")
        || call.isMethodCall(interface: BusFace.propertiesInterface, member: "GetAll")
      {
        if !intercept(call) { answerPropertyRead(call) }
      } else if call.isMethodCall(interface: BusFace.propertiesInterface, member: "Set") {
        _ = intercept(call)
      } else {
        handle(call)
      }
    }
  }
}
