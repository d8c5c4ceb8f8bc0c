import Glibc

/// Whether a socket's directory is safe to use: whoever can write a directory can move a socket
/// in it aside and put their own in its place, and the other side then talks to them. tmux
/// refuses /tmp/tmux-UID for this reason; the daemon (before it binds) and sectionctl (before
/// it connects) both ask here, by the rule the state directory follows
/// (`FileSystem.privateDirectoryProblem`).
public enum SocketDirectory {
  /// Nil when the directory holding `socket` passes `FileSystem.privateDirectoryProblem`. A
  /// sticky directory others can write, such as /tmp, is allowed too, since there nobody moves
  /// or removes what is not theirs, when it is root's or ours, the directories above it pass,
  /// and a file already at `socket` is ours or root's. A directory that does not exist yet is
  /// no problem (connecting then says there is no socket). Otherwise what is wrong and the fix.
  public static func problem(socket: String) -> String? {
    let directory = directoryName(of: socket)
    guard let status = try? FileSystem.status(directory, followingLinks: true) else { return nil }
    guard status.isSticky && status.isWritableByOthers else {
      return FileSystem.privateDirectoryProblem(directory, holding: "the socket")
    }
    let user = geteuid()
    if let problem = FileSystem.privateDirectoryProblem(directory + "/..", holding: "the socket") {
      return problem
    }
    for (path, owner) in [(directory, status.owner), (socket, (try? FileSystem.status(socket))?.owner)]
    where owner != nil && owner != user && owner != 0 {
      return
        "\(path) belongs to uid \(owner!), not to you or root, in a directory others can write: it may be "
        + "another user's posing as sectiond's; remove it, or use a socket in a directory of your own "
        + "(--socket, SECTIOND_SOCKET or XDG_RUNTIME_DIR)"
    }
    return nil
  }

  /// `problem` as a client asks it. `named`: the socket was named (`--socket`,
  /// `SECTIOND_SOCKET`), so the user asks for the daemon of whoever owns it; then a directory
  /// of the socket's own owner that nobody else can write passes too: only that owner could
  /// swap the socket, and that owner's daemon is the one asked for. A default path gets no
  /// such trust: another user who made /tmp/sectiond-UID first would pass as the user's own
  /// daemon, so there the refusal says how to name the socket instead.
  public static func clientProblem(socket: String, named: Bool) -> String? {
    guard let problem = problem(socket: socket) else { return nil }
    let directory = directoryName(of: socket)
    guard let status = try? FileSystem.status(directory, followingLinks: true), !status.isWritableByOthers,
      status.owner != geteuid(), status.owner != 0
    else { return problem }
    if !named {
      return problem + "; or, if it is uid \(status.owner)'s daemon, name its socket with --socket (-s)"
    }
    let ownersSocket = (try? FileSystem.status(socket))?.owner == status.owner
    let above = FileSystem.privateDirectoryProblem(directory + "/..", holding: "the socket")
    return ownersSocket && above == nil ? nil : problem
  }

  /// Nil when `directory`, the user's own daemons' directory (`$XDG_RUNTIME_DIR/sectiond`, or
  /// `/tmp/sectiond-UID` without XDG_RUNTIME_DIR), is the user's own as it stands: the name
  /// itself (lstat, not what it leads to) a directory, not a symbolic link, owned by this user
  /// and writable by nobody else. In /tmp anyone may make that name first: a link to root's
  /// /run/sectiond, or a directory of another user's, would otherwise pass another daemon off as
  /// "your own daemon". tmux checks /tmp/tmux-UID the same way. A directory not there yet is
  /// no problem (the daemon makes it). Otherwise what is wrong, naming the path and the fix.
  public static func ownDirectoryProblem(_ directory: String) -> String? {
    let status: FileSystem.Status
    do {
      guard let found = try FileSystem.status(directory) else { return nil }
      status = found
    } catch {
      return "cannot check your daemons' directory: \(error)"
    }
    let fix =
      "; remove it (rm \(status.isDirectory ? "-r " : "")\(directory), as root if need be) and start your "
      + "daemon again, or set XDG_RUNTIME_DIR"
    let user = geteuid()
    if status.isSymbolicLink {
      return "\(directory) is a symbolic link, not a directory of your own: another user may have made it "
        + "to pass another daemon off as yours\(fix)"
    }
    if !status.isDirectory {
      return "\(directory) is not a directory, so not your daemons' directory\(fix)"
    }
    if status.owner != user {
      return "\(directory) belongs to uid \(status.owner), not to you (uid \(user)): it is not your daemons' "
        + "directory, whoever made it\(fix)"
    }
    if status.isWritableByOthers {
      let mode = String(status.mode & 0o7777, radix: 8)
      return "\(directory) (mode \(mode)) can be written by other users, who could put a socket of theirs "
        + "there: chmod go-w \(directory)"
    }
    return nil
  }
}
