import Posix

/// Checks that keep a root daemon from trusting files other users could have written.
enum Security {
  /// As root, refuses a config or state file writable by group or others, or not owned by root,
  /// unless --allow-insecure: whoever can write them could decide what root serves.
  static func checkFiles(_ options: DaemonOptions, statePath: String?) throws {
    guard ProcessInfo.userID == 0, !options.allowInsecure else { return }
    let paths = [options.configPath, statePath].compactMap { $0 }
    for path in paths {
      guard let status = try FileSystem.status(path) else { continue }
      if status.isWritableByOthers || status.owner != 0 {
        throw StartFailure(
          "\(path) is writable by users other than root (or not owned by root); fix with chown root: \(path) && chmod go-w \(path), or start with --allow-insecure"
        )
      }
    }
  }
}
