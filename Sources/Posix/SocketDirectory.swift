import Glibc

/// Whether a socket's directory is safe to use: whoever can write a directory can move a socket
/// in it aside and put their own in its place, and the other side then talks to them. tmux
/// refuses /tmp/tmux-UID for this reason, sshd's StrictModes refuses the files above
/// authorized_keys; the daemon (before it binds) and sectionctl (before it connects) both ask here.
public enum SocketDirectory {
  /// Nil when the directory holding `socket`, and every directory above it, belongs to `userID`
  /// or root and only its owner can write it; a sticky directory others can write (/tmp) is
  /// allowed, since there nobody moves or removes what is not theirs, but then a file already at
  /// `socket` must belong to `userID` or root too. Otherwise what is wrong and how to fix it, in
  /// a sentence naming the directory. A directory that does not exist yet is no problem.
  public static func problem(socket: String, userID: uid_t) -> String? {
    let directory = absolute(directoryName(of: socket))
    var prefix = ""
    let components = directory.split(separator: "/")
    for (number, component) in ([""] + components.map(String.init)).enumerated() {
      prefix = number == 0 ? "/" : (prefix == "/" ? "" : prefix) + "/" + component
      // A symbolic link is judged by who could replace it (its owner) and by where it leads.
      guard let link = try? FileSystem.status(prefix) else { return nil }
      guard let status = link.isSymbolicLink ? try? FileSystem.status(prefix, followingLinks: true) : link
      else { return nil }
      let trusted: Set<uid_t> = [userID, 0]
      for owner in [link.owner, status.owner] where !trusted.contains(owner) {
        return
          "the socket directory \(prefix) belongs to user \(owner), not to you (uid \(userID)) or root, "
          + "so that user could put their own socket in place of sectiond's; remove it "
          + "(its owner or root can: rm -r \(prefix)) or use a socket in a directory of your own "
          + "(--socket, SECTIOND_SOCKET or XDG_RUNTIME_DIR)"
      }
      if status.isWritableByOthers && status.mode & S_ISVTX == 0 {
        return
          "the socket directory \(prefix) is writable by other users (mode \(octal(status.mode & 0o7777))), "
          + "so they could put their own socket in place of sectiond's; fix with chmod go-w \(prefix), "
          + "or use a socket in a directory of your own (--socket, SECTIOND_SOCKET or XDG_RUNTIME_DIR)"
      }
      if number == components.count, status.isWritableByOthers,
        let file = try? FileSystem.status(socket), !trusted.contains(file.owner)
      {
        return
          "\(socket) belongs to user \(file.owner), not to you (uid \(userID)) or root, in \(prefix), which "
          + "others can write: it may be another user's socket posing as sectiond's; remove it (rm \(socket)) "
          + "or use a socket in a directory of your own (--socket, SECTIOND_SOCKET or XDG_RUNTIME_DIR)"
      }
    }
    return nil
  }

  /// `path` from the root: relative paths are taken from the working directory, as connect does.
  private static func absolute(_ path: String) -> String {
    if path.hasPrefix("/") { return path }
    guard let cwd = getcwd(nil, 0) else { return path }
    defer { free(cwd) }
    let base = String(cString: cwd)
    return path == "." ? base : base + "/" + path
  }

  private static func octal(_ mode: mode_t) -> String {
    let text = String(mode, radix: 8)
    return String(repeating: "0", count: max(4 - text.count, 0)) + text
  }
}
