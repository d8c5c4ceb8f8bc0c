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

extension CommandSpec {
  /// `sectionctl watch`.
  static let watch = CommandSpec(
    usage: ["watch [--json] [--view] [--count N] [--from REV]"],
    summary: "print every change as it happens, until interrupted",
    details: """
      First prints the current state, then one line per change:
        state REV MODE IDS|-     opened REV INDEX ID     closed REV INDEX ID
        mode REV MODE            reload REV
        inserted REV INDEX ID    deleted REV INDEX ID    moved REV FROM TO ID
        renamed REV INDEX ID     items REV INDEX ID COUNT
      If the daemon restarts, watch reconnects (waiting at most 2 s between attempts) and resumes
      where it left off: the changes it missed, each with its revision, and no new state line;
      a state line only where the daemon no longer keeps them (sectiond --history). Ctrl-C or
      SIGTERM ends it with status 0.
      Options:
        --count N    exit after N changes
        --view       redraw the accordion (as 'sectionctl view') on every change
        --from REV   start after revision REV instead of with the state: the changes since
                     first, as they happened, where the daemon still keeps them (else the state)
      With --json: one object per line, {\"event\": \"state\"|\"opened\"|\"closed\"|\"mode\"|\"reload\"|
      \"inserted\"|\"deleted\"|\"moved\"|\"renamed\"|\"items\", \"revision\", ...}.
      """,
    example: "sectionctl watch | while read -r event rev rest; do echo \"$event at $rev\"; done",
    check: { (options) throws(CommandLineError) in
      if options.from != nil && options.view {
        throw .usage("--from does not apply to watch --view, which redraws the list")
      }
      if options.timeout != nil {
        throw .usage("--timeout applies to one-shot commands; watch waits for the daemon by design")
      }
    },
    parse: { (arguments, options) throws(CommandLineError) in
      try ArgumentParser.none(arguments, .watch)
      return .watch(count: options.count, view: options.view, from: options.from)
    },
    run: { (runner) throws(CommandLineError) in try runner.lifting(runner.runWatch) })
}

extension Runner {
  fileprivate func runWatch() throws(ClientError) -> ExitStatus {
    guard case .watch(let count, let view, let from) = invocation.command else {
      preconditionFailure("watch runs .watch")
    }
    let watcher = Watcher(
      path: readingPath(), name: clientName, from: from, json: invocation.json, view: view, count: count,
      style: style, clearsScreen: environment.outputIsTerminal && !invocation.json, output: output)
    return try watcher.run()
  }
}
