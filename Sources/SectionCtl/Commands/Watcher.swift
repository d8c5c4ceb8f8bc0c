import Posix
import SectionClient

/// `sectionctl watch`: subscribes, prints each change, and outlives daemon restarts.
struct Watcher {
  let path: String
  /// What the daemon's history calls the connection (`--name`).
  let name: String
  /// `--from REV`: the first subscription resumes after that revision, printing the changes
  /// since as they happened where the daemon still keeps them (else the state, as always).
  let from: UInt64?
  let json: Bool
  let view: Bool
  let count: Int?
  let style: Style
  /// Redraws in `--view` mode replace the screen on a terminal instead of scrolling.
  let clearsScreen: Bool
  let output: Output

  /// Runs until `count` changes were seen (status 0), or forever; SIGINT and SIGTERM end it with status 0.
  /// Only the first connection may fail with "cannot connect": after that the daemon is waited
  /// for, and a reconnection resumes (`SUBSCRIBE FROM`): the changes missed during the gap are
  /// printed as they happened. Where the daemon no longer keeps them, the state is printed
  /// afresh (`state ...`), so a reader knows where things stand after the gap.
  func run() throws(ClientError) -> ExitStatus {
    ProcessInfo.exitSuccessfullyOnInterrupt()
    var seen = 0
    try Subscriber(path: path, name: name, after: from).run(
      news: { Watcher.report($0, path: path, to: output) },
      handle: { update, client throws(ClientError) in
        switch update {
        case .subscribed(let snapshot):
          if view { try redraw(client) } else { show(.state(snapshot)) }
          return false
        case .event(let event):
          return try follow(event, client, seen: &seen)
        }
      })
    return .success
  }

  /// Says what happened to a subscription that outlives the daemon (watch, log -f).
  static func report(_ news: Subscriber.News, path: String, to output: Output) {
    switch news {
    case .lost: output.diagnose("lost the connection to sectiond on \(path); reconnecting")
    case .reconnected: output.diagnose("reconnected to \(path)")
    }
  }

  /// Prints one event; true once enough changes were seen.
  private func follow(_ event: Event, _ client: Client, seen: inout Int) throws(ClientError) -> Bool {
    if case .bye(let reason) = event {
      output.diagnose("sectiond is closing the connection (\(reason))")
      return false
    }
    if event.isChange { seen += 1 }
    if view {
      if !client.hasPendingEvents { try redraw(client) }
    } else {
      show(event)
    }
    guard let count, seen >= count else { return false }
    if view && client.hasPendingEvents { try redraw(client) }
    return true
  }

  private func show(_ event: Event) {
    if json { output.print(JSONRenderer.event(event)) } else { output.print(TextRenderer.event(event)) }
  }

  /// Asks for the accordion on the subscribed connection (events that arrive meanwhile wait) and prints it.
  private func redraw(_ client: Client) throws(ClientError) {
    let reply = try client.perform(Request<Listing>.view.asReply).succeeded()
    if json {
      output.print(JSONRenderer.view(reply.sections, items: reply.items, revision: reply.revision))
      return
    }
    let accordion = TextRenderer.accordion(reply.sections, items: reply.items, style: style)
    output.print(clearsScreen ? "\u{1B}[H\u{1B}[2J" + accordion : accordion + "\n")
  }
}
