import Glibc
import Posix

/// sectiond-fleet, sectiond with the fleet linked in: what `sectiond --etcd` becomes, by execve
/// in the same process before it opens anything. A sectiond without --etcd so maps none of the
/// fleet's code (the etcd client, its JSON, the fleet's metadata: its idle RSS stays what it
/// was without the fleet), and the Swift runtime, linked statically into each binary, is never loaded twice
/// as a dlopen'd Swift library would load it. The same PID, environment and descriptors carry
/// systemd's socket activation (LISTEN_PID), notify socket, fd store and credentials across.
package enum FleetBinary {
  static let name = "sectiond-fleet"

  /// Where it is looked for, in order: beside the executable (a build tree: `swift build`
  /// builds both), then in `libexec/sectiond/` beside the executable's directory
  /// (scripts/install.sh and the .deb: /usr/bin/sectiond, /usr/libexec/sectiond/sectiond-fleet).
  static func candidates(beside executable: String) -> [String] {
    let here = directoryName(of: executable)
    return ["\(here)/\(name)", "\(directoryName(of: here))/libexec/sectiond/\(name)"]
  }

  /// The fleet binary's path, or the failure that names where it was looked for and the fix.
  static func locate() throws -> String {
    guard let executable = ProcessInfo.executablePath() else {
      throw StartFailure("--etcd: cannot read /proc/self/exe to find \(name), which runs the fleet")
    }
    let paths = candidates(beside: executable)
    if let found = paths.first(where: FileSystem.isExecutableFile) { return found }
    throw StartFailure(
      "--etcd needs \(name) (sectiond with the fleet, docs/FLEET.md) at \(paths.joined(separator: " or ")): not there or not executable; install it: the sectiond package has it, `make install` puts it in PREFIX/libexec/sectiond/, `swift build` beside sectiond",
      errno: Errno.noEntry)
  }

  /// Set in the environment across the exec, and removed by the fleet binary's main: a
  /// sectiond that finds it set was itself exec'd as the fleet binary, so what is installed as
  /// sectiond-fleet is a plain sectiond, which would exec itself for ever.
  package static let marker = "SECTIOND_EXEC_FLEET"

  /// Becomes the fleet binary with this process's own arguments (argv[0] kept) and environment.
  /// Returns only by throwing: not found, not the fleet, or execve failed.
  static func become() throws {
    let path = try locate()
    if ProcessInfo.environment(marker) != nil {
      throw StartFailure(
        "--etcd: \(path) is a sectiond without the fleet, not \(name); install \(name) from the same build as sectiond",
        errno: Errno(ENOEXEC))
    }
    ProcessInfo.setEnvironment(marker, "1")
    let error = ProcessInfo.execute(path, arguments: CommandLine.arguments)
    throw StartFailure("--etcd: cannot run \(path): \(error)", errno: error.errno)
  }
}
