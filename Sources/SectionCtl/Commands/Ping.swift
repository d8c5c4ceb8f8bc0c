import Posix
import SectionClient

extension CommandSpec {
  /// `sectionctl ping`.
  static let ping = CommandSpec(
    usage: ["ping [--json]"],
    summary: "check that the daemon answers, and how fast",
    details:
      "Exits 0 when the daemon answers, 3 when it cannot be reached. With --json: {\"socket\", \"milliseconds\"}.",
    example: "sectionctl ping || echo 'sectiond is down'",
    parse: { (arguments, _) throws(CommandLineError) in
      try ArgumentParser.none(arguments, .ping)
      return .ping
    },
    run: { (runner) throws(CommandLineError) in try runner.lifting(runner.runPing) })
}

extension Runner {
  fileprivate func runPing() throws(ClientError) -> ExitStatus {
    let client = try connect()
    let start = monotonicMicroseconds()
    try client.perform(.ping)
    let milliseconds = Double(monotonicMicroseconds() - start) / 1000
    let rounded = (milliseconds * 100).rounded() / 100
    show(
      text: "sectiond on \(client.path) answered in \(rounded) ms\n",
      json: JSONRenderer.ping(socket: client.path, milliseconds: rounded))
    return .success
  }
}
