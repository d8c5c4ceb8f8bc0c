import SectionCore

/// Long answers from the history (HISTORY, a replay), made part by part as the client reads.
extension Server {
  /// Makes the next part of the connection's long answer once its output has drained below
  /// `HistoryStream.lowWater`, and sends what the socket takes: a client that does not read
  /// holds one part. One part a write, then the next when the socket is writable again: with
  /// hundreds of such connections writable at once, a part each keeps the loop turn short (at
  /// four parts a write, 700 clients asking for 9.5 MiB held another client's PING 1.0-1.1 s;
  /// at one, 0.2-0.5 s, debug build). A replay that is done makes its subscriber live; one
  /// whose next change went is owed the state instead.
  func continueStream(_ connection: Connection) {
    guard var stream = connection.stream, connection.output.count < HistoryStream.lowWater else { return }
    let progress = service.continueStream(&stream, to: &connection.output)
    connection.stream = progress == .more ? stream : nil
    if stream.isReplay && progress != .more { connection.handle(.replayEnded(caughtUp: progress == .done)) }
    if !connection.flush() { close(connection) }
  }

  /// Finishes a long answer whole, for what needs it in one piece (the handover's record).
  func finishStream(_ connection: Connection) {
    guard var stream = connection.stream else { return }
    connection.stream = nil
    let progress = service.continueStream(&stream, to: &connection.output, limit: .max)
    if stream.isReplay { connection.handle(.replayEnded(caughtUp: progress == .done)) }
  }
}
