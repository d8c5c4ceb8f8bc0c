/// Runtime edits in the service: batches, and the events of edits.
extension SectionService {
  /// Applies a batch's lines as one change: every line is parsed first, then they are applied
  /// in order; the first that fails undoes the others, and is the reply.
  /// A batch that must wait for the next turn waits before its lines are parsed: when many
  /// clients end batches in one turn, each that waits would otherwise parse its 10,000 lines
  /// again every turn it waits.
  func apply(_ batch: Batch, session: Session, reply: inout OutputQueue) throws(ProtocolError) -> Outcome {
    if turnIsFull { return .deferred }
    if let problem = batch.problem { throw problem }
    var requests: [(Request, Int)] = []
    requests.reserveCapacity(batch.count)
    try batch.forEachLine { (line, number) throws(ProtocolError) in
      switch RequestParser.parse(line) {
      case .failure(let error)?: throw Batch.atLine(number, error)
      case .success(let request)? where request.isBatchable:
        // A batch is one change: a line above the client's level refuses it whole, before
        // any line is applied.
        if request.level > session.access.level {
          throw refusal(of: request, by: session, line: number)
        }
        requests.append((request, number))
      case .success?:
        var words = Words(line)
        let name = String(decoding: words.next() ?? [], as: UTF8.self).uppercased()
        throw Batch.atLine(number, ProtocolError(.syntax, "\(name) cannot be in a batch; only changes can"))
      case nil: break
      }
    }
    // A line that fails, or takes the batch past a bound, is the reply; `change` undoes the
    // lines before it. The bounds are checked after each line, so that a refused batch stops
    // at the bound rather than run its 10,000 lines of OPEN ALL first.
    return try change(author: session.author, reply: &reply) {
      [limits] (model, changes) throws(ProtocolError) in
      // `changes` holds the turn's earlier changes too; the bound is on this batch's.
      let start = changes.count
      for (request, number) in requests {
        do throws(ProtocolError) {
          try model.perform(request, limits: limits, changes: &changes)
          try limits.checkRequest(changes.count - start, revision: model.revision)
        } catch {
          throw Batch.atLine(number, error)
        }
      }
    }
  }
}
