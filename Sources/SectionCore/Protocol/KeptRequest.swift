/// A request of a group whose commit may come back as a retry (another host committed first),
/// kept as the value it was parsed into, to run again on the newer state (`SectionService.run`):
/// a retry re-runs requests, never the bytes they came in.
public enum KeptRequest: Sendable {
  case request(Request)
  /// A BATCH ended by its END: its lines, run again as one request.
  case batch(Batch)
}

extension SectionService {
  /// Runs a kept request again, as `handle` ran it: a refusal becomes its `ERR` line.
  public func run(_ kept: KeptRequest, session: inout Session, reply: inout OutputQueue) -> Outcome? {
    var batch: Batch?
    switch kept {
    case .request(let request):
      return run(request, session: &session, batch: &batch, reply: &reply)
    case .batch(let lines):
      batch = lines
      return run(.end, session: &session, batch: &batch, reply: &reply)
    }
  }
}
