import Posix

/// Checks that keep a root daemon from trusting files other users could have written.
enum Security {
  /// As root, refuses a config, access rules or state file writable by group or others, or not owned by root,
  /// unless --allow-insecure: whoever can write them could decide what root serves.
  static func checkFiles(_ options: DaemonOptions, statePath: String?) throws {
    guard ProcessInfo.userID == 0, !options.allowInsecure else { return }
    let paths = [(options.configPath, "--config"), (options.accessPath, "--access"), (statePath, "--state")]
    for case (let path?, let option) in paths {
      guard let status = try FileSystem.status(path) else { continue }
      if status.isSymbolicLink {
        // chown and chmod would follow the link and change the file it points to, and leave
        // the link, which anyone who can write its directory can point elsewhere, in place.
        throw StartFailure(
          "\(path) is a symbolic link, which sectiond running as root does not trust; give \(option) the file's own path (readlink -f \(path)), or replace the link with a copy of the file (cp --remove-destination \"$(readlink -f \(path))\" \(path)), or start with --allow-insecure"
        )
      }
      if status.isWritableByOthers || status.owner != 0 {
        throw StartFailure(
          "\(path) is writable by users other than root (or not owned by root); fix with chown root: \(path) && chmod go-w \(path), or start with --allow-insecure"
        )
      }
    }
  }
}
