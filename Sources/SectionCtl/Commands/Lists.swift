import Posix
import SectionClient
import SectionCore

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
  /// that is not a list's (`sectiond --socket` put something else there) is passed over.
  static func find(in directories: [(path: String, kind: SocketLocation.Kind)]) -> [Found] {
    var found: [Found] = []
    func look(_ directory: String, name: ListName?, kind: SocketLocation.Kind) {
      let control = "\(directory)/\(SocketNames.control)"
      let sockets = [control, "\(directory)/\(SocketNames.readonly)"]
      if sockets.contains(where: { (try? FileSystem.status($0))?.isSocket == true }) {
        found.append(Found(name: name, kind: kind, control: control))
      }
    }
    for (directory, kind) in directories {
      look(directory, name: nil, kind: kind)
      for entry in (try? FileSystem.entries(of: directory)) ?? [] {
        guard let name = try? ListName(validating: entry) else { continue }
        look("\(directory)/\(entry)", name: name, kind: kind)
      }
    }
    return found
  }

  /// How long one list that does not answer holds up the rest, unless --timeout says otherwise.
  static let timeout = 5.0

  func run() -> ExitStatus {
    let given = runner.invocation.timeout
    let timeout = given == Invocation.defaultTimeout ? Lists.timeout : given
    let directories = SocketLocation.directories(environment: runner.environment)
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
