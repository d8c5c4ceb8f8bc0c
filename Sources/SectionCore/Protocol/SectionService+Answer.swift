/// The entry of a face that takes values and gives them back (D-Bus): the same `execute` as a
/// socket's line, its answer as values rather than as a reply to read back.
extension SectionService {
  /// What a request answered, as values.
  public struct Answer {
    /// `.changed`: answer once the change is saved; `.deferred`: hand the request in again
    /// after the save; `.reload`: the face's server re-reads the config.
    public var outcome: Outcome
    /// The revision its `OK` names.
    public var revision: UInt64
    /// The index of the section the request named (`ITEMS`, `TOGGLE`), as it is now.
    public var section: Int?
    /// Whether that section is open now: `TOGGLE`'s answer.
    public var open: Bool
    /// The reply as a socket gets it (a RELOAD's), a long one made whole; empty for `HISTORY`.
    public var lines: OutputQueue
    /// The changes `HISTORY` lists, oldest first, as its lines show them to the session.
    public var changes: [HistoryRecord] = []
  }

  /// Executes `request` of `session` (a batch as `.end` with its lines in `batch`), as
  /// `execute(_:session:batch:reply:)` does for every face; the refusal is the error, a value.
  public func answer(_ request: Request, session: inout Session, batch: inout Batch?) -> Result<
    Answer, ProtocolError
  > {
    var reply = OutputQueue()
    do throws(ProtocolError) {
      // `HISTORY` answers with the kept changes as values, never lines to read back; while
      // changes wait for their save, `execute` defers it as every read.
      if request.verb == .history, !hasUnsavedChanges {
        let changes = records(from: try listed(by: request), access: session.access)
        return .success(
          Answer(
            outcome: .replied, revision: model.revision, section: nil, open: false, lines: reply,
            changes: changes))
      }
      var outcome = try execute(request, session: &session, batch: &batch, reply: &reply) ?? .replied
      // A long answer is made whole: the face sends it as one message.
      if outcome == .streaming, var stream = takeStream() {
        _ = continueStream(&stream, to: &reply, limit: .max)
        outcome = .replied
      }
      var section: Int?
      switch request {
      case .items(let ref), .toggle(let ref): section = try? resolve(ref)
      default: break
      }
      return .success(
        Answer(
          outcome: outcome, revision: model.revision, section: section,
          open: section.map(model.isOpen) ?? false, lines: reply))
    } catch {
      return .failure(error)
    }
  }
}
