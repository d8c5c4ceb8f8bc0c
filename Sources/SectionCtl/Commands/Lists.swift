import Posix
import SectionClient

/// `sectionctl lists`: every list this user can reach, so that a person finds them without
/// knowing the paths. Each socket directory (`SocketLocation.directories`: the user's own,
/// then the system's) holds the unnamed list's sockets and a directory per named list, as
/// `sectiond --list NAME` and `sectiond@NAME.socket` make them; each list found is asked
/// what `status` asks (through its read-only socket when the control socket is refused).
struct Lists {
  let runner: Runner

  /// One list's socket, found by looking, not yet asked.
  struct Found: Equatable {
    let name: ListName?
    let kind: SocketLocation.Kind
    let control: String
  }

  /// A list and what its daemon said, or why it could not be asked.
  struct Row {
    let found: Found
    let status: Result<DaemonStatus, ClientError>
  }

  /// The lists in `directories`, unnamed first in each, then by name. A directory with a name
  /// that is not a list's (`sectiond --socket` put something else there) is passed over. Each
  /// directory's control sockets are named `file` (`control.sock`, or `$SECTIOND_SOCKET`'s).
  static func find(in directories: [(path: String, kind: SocketLocation.Kind, file: String)]) -> [Found] {
    var found: [Found] = []
    func look(_ directory: String, name: ListName?, kind: SocketLocation.Kind, file: String) {
      let control = "\(directory)/\(file)"
      let sockets = [control, SocketNames.readonlyPath(forControl: control)]
      if sockets.contains(where: { (try? FileSystem.status($0))?.isSocket == true }) {
        found.append(Found(name: name, kind: kind, control: control))
      }
    }
    for (directory, kind, file) in directories {
      look(directory, name: nil, kind: kind, file: file)
      for entry in (try? FileSystem.entries(of: directory)) ?? [] {
        guard let name = try? ListName(validating: entry) else { continue }
        look("\(directory)/\(entry)", name: name, kind: kind, file: file)
      }
    }
    return found
  }

  /// Where to look: `$SECTIOND_SOCKET`'s directory first (`make run`'s `.run/`, as
  /// `sectionctl -l NAME` finds its lists there), then the user's own and the system's.
  static func directories(environment: Environment) -> [(
    path: String, kind: SocketLocation.Kind, file: String
  )] {
    let usual = SocketLocation.directories(environment: environment).map {
      ($0.path, $0.kind, SocketNames.control)
    }
    guard let given = SocketLocation.givenDirectory(environment: environment),
      !usual.contains(where: { $0.0 == given.path && $0.2 == given.file })
    else { return usual }
    return [(given.path, .given, given.file)] + usual
  }

  /// How long one list that does not answer holds up the rest, unless --timeout says otherwise.
  static let timeout = 5.0

  func run() throws(ClientError) -> ExitStatus {
    let given = runner.invocation.timeout
    let timeout = given == Invocation.defaultTimeout ? Lists.timeout : given
    let directories = Lists.directories(environment: runner.environment)
    // The user's own directory, if it is not theirs, would list another's daemons as theirs.
    if let own = SocketLocation.ownDirectory(environment: runner.environment),
      let problem = SocketDirectory.ownDirectoryProblem(own)
    {
      throw .untrustedSocket(problem)
    }
    let rows = Lists.find(in: directories).map { found in
      var invocation = Invocation(command: .status, json: runner.invocation.json, timeout: timeout)
      invocation.socket = found.control
      let asking = Runner(invocation: invocation, environment: runner.environment, output: runner.output)
      return Row(found: found, status: Result { () throws(ClientError) in try asking.daemonStatus() })
    }
    if runner.invocation.json {
      runner.output.print(JSONRenderer.lists(rows))
    } else {
      runner.output.print(
        TextRenderer.lists(
          rows, looked: directories.map(\.path), style: Style(environment: runner.environment)))
    }
    return .success
  }
}

extension CommandSpec {
  /// `sectionctl lists`.
  static let lists = CommandSpec(
    usage: ["lists [--json]"],
    summary: "every list this user can reach, named or not, system and own, one a line",
    details: """
      Looks for sockets in your own daemons' directory ($XDG_RUNTIME_DIR/sectiond) and the
      system's (/run/sectiond): the unnamed list's, and a directory per named list
      (sectiond --list NAME, sectiond@NAME.service). Each is asked as 'status' asks, through
      its read-only socket when the control socket is refused (CLIENTS is then -). A list that
      does not answer within 5 s (--timeout SECONDS) is listed with why. Use one with
      'sectionctl -l NAME COMMAND'.
      With --json: {\"lists\": [{\"name\" (null: the unnamed list), \"scope\" (user or system),
      \"socket\", \"sections\", \"open\", \"revision\", \"clients\", \"error\"}]}.
      """,
    example: "sectionctl lists --json | jq -r '.lists[] | select(.name) | .name'",
    parse: { (arguments, options) throws(CommandLineError) in
      try ArgumentParser.none(arguments, .lists)
      if options.readonly {
        throw .usage(
          "--readonly (-r) means nothing to lists: it reads each list's status itself, through the "
            + "read-only socket when the control socket is refused")
      }
      if options.socket != nil || options.readonlySocket != nil {
        throw .usage(
          "lists looks through every socket directory itself (and that of $SECTIOND_SOCKET): "
            + "--socket and --readonly-socket name one daemon; use status for one")
      }
      if options.list != nil {
        throw .usage("--list (-l) names one list, and lists shows them all; use status for one")
      }
      return .lists
    },
    run: { (runner) throws(CommandLineError) in try runner.lifting(Lists(runner: runner).run) })
}
