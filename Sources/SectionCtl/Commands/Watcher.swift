import Posix
import SectionClient

/// `sectionctl watch`: subscribes, prints each change, and outlives daemon restarts.
struct Watcher {
  /// Waits between reconnection attempts: short at first, so a restart is noticed quickly,
  /// never longer than the last, so a daemon that comes back is found within 2 s.
  static let backOffMilliseconds = [100, 200, 400, 800, 1600, 2000]

  let path: String
  let json: Bool
  let view: Bool
  let count: Int?
  let style: Style
  /// Redraws in `--view` mode replace the screen on a terminal instead of scrolling.
  let clearsScreen: Bool
  let output: Output

  /// Runs until `count` changes were seen (status 0), or forever; SIGINT and SIGTERM end it with status 0.
  /// Only the first connection may fail with "cannot connect": after that the daemon is waited for.
  func run() throws(ClientError) -> ExitStatus {
    ProcessInfo.exitSuccessfullyOnInterrupt()
    var client = try Client(path: path)
    var seen = 0
    while true {
      do {
        if try follow(client, seen: &seen) { return .success }
      } catch .connectionLost {
        // Gone in the middle of a reply: the same as a clean close, reconnect below.
      }
      output.diagnose("lost the connection to sectiond on \(path); reconnecting")
      client = reconnect()
      output.diagnose("reconnected to \(path)")
    }
  }

  /// Subscribes on `client` and prints until the connection ends (false) or enough changes were seen (true).
  private func follow(_ client: Client, seen: inout Int) throws(ClientError) -> Bool {
    let reply = try client.request("SUBSCRIBE").succeeded()
    if view {
      try redraw(client)
    } else if let snapshot = reply.state {
      show(.state(snapshot))
    }
    while let event = try client.nextEvent() {
      if case .bye(let reason) = event {
        output.diagnose("sectiond is closing the connection (\(reason))")
        continue
      }
      if event.isChange { seen += 1 }
      if view {
        if !client.hasPendingEvents { try redraw(client) }
      } else {
        show(event)
      }
      if let count, seen >= count {
        if view && client.hasPendingEvents { try redraw(client) }
        return true
      }
    }
    return false
  }

  private func show(_ event: Event) {
    if json { output.print(JSONRenderer.event(event)) } else { output.print(TextRenderer.event(event)) }
  }

  /// Asks for the accordion on the subscribed connection (events that arrive meanwhile wait) and prints it.
  private func redraw(_ client: Client) throws(ClientError) {
    let reply = try client.request("VIEW").succeeded()
    if json {
      output.print(JSONRenderer.view(reply.sections, items: reply.items, revision: reply.revision))
      return
    }
    let accordion = TextRenderer.accordion(reply.sections, items: reply.items, style: style)
    output.print(clearsScreen ? "\u{1B}[H\u{1B}[2J" + accordion : accordion + "\n")
  }

  /// Tries again and again, waiting longer each time up to the cap, until the daemon answers.
  private func reconnect() -> Client {
    var attempt = 0
    while true {
      ProcessInfo.sleep(
        milliseconds: Watcher.backOffMilliseconds[min(attempt, Watcher.backOffMilliseconds.count - 1)])
      attempt += 1
      if let client = try? Client(path: path) { return client }
    }
  }
}
