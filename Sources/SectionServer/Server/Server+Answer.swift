import SectionCore

/// What a face other than the sockets (D-Bus) asks of the server: requests as values, answers
/// as values, and the state it shows, without reaching into the service.
extension Server {
  /// The list as the faces show it.
  var model: SectionModel { service.model }
  /// Whether changes of this turn wait for their save: what would show them waits too.
  var hasUnsavedChanges: Bool { service.hasUnsavedChanges }
  /// The most lines a batch may have (`--max-batch-lines`).
  var batchLines: Int { service.limits.batchLines }

  /// Executes `request` of `session` where a socket's request goes, a batch as `.end` with its
  /// lines in `batch`; a RELOAD re-reads the config, by the session's author. The answer, or
  /// the refusal, as values; `.changed` is answered once its group is committed (`finish`).
  func answer(_ request: Request, session: inout Session, batch: inout Batch?) -> Result<
    SectionService.Answer, ProtocolError
  > {
    let answer = service.answer(request, session: &session, batch: &batch)
    // A refusal above the caller's level is answered at once, and logged as a socket's is.
    if service.denial != nil { noteDenial() }
    guard case .success(var done) = answer, done.outcome == .reload else { return answer }
    do throws(ProtocolError) {
      done.outcome = try reload(by: session, reply: &done.lines)
      done.revision = service.model.revision
      return .success(done)
    } catch {
      return .failure(error)
    }
  }
}
