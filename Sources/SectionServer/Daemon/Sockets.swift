import Glibc
import Posix
import SectionCore
import Systemd

/// The listening sockets: inherited from systemd when socket-activated, else bound here.
enum Sockets {
  struct Opened {
    let fd: FileDescriptor
    let access: SectionService.Access
    /// The file we created and remove on exit; nil for sockets systemd owns.
    let file: SocketFile?
  }

  /// The listening sockets among `inherited` (what systemd passed), else sockets bound here.
  static func open(_ options: DaemonOptions, inherited: [SocketActivation.Inherited]) throws -> [Opened] {
    let listening = inherited.filter { $0.kind == .listeningSocket }
    if !listening.isEmpty { return try adopt(listening) }
    let checked = !options.allowInsecure
    if checked, let own = options.ownSocketDirectory, let problem = SocketDirectory.ownDirectoryProblem(own) {
      throw StartFailure(problem)
    }
    var sockets = [try bind(options.socketPath, access: .control, permissions: 0o660, checked: checked)]
    if let path = options.readOnlySocketPath {
      do {
        sockets.append(try bind(path, access: .readOnly, permissions: 0o666, checked: checked))
      } catch {
        sockets[0].fd.close()
        sockets[0].file?.removeIfStillOurs()
        throw error
      }
    }
    return sockets
  }

  /// Sockets from systemd, by FileDescriptorName=: `control` and `readonly`. A single socket
  /// without a name (systemd-socket-activate without --fdname) is the control socket.
  private static func adopt(_ inherited: [SocketActivation.Inherited]) throws -> [Opened] {
    let sockets = try inherited.map { socket throws -> Opened in
      switch socket.name {
      case "control": return Opened(fd: socket.fd, access: .control, file: nil)
      case "readonly": return Opened(fd: socket.fd, access: .readOnly, file: nil)
      case _ where inherited.count == 1: return Opened(fd: socket.fd, access: .control, file: nil)
      default:
        throw StartFailure(
          "systemd passed a socket named \"\(socket.name)\"; set FileDescriptorName=control or readonly")
      }
    }
    guard sockets.contains(where: { $0.access == .control }) else {
      throw StartFailure("systemd passed no socket named \"control\"; enable sectiond.socket")
    }
    return sockets
  }

  /// Binds `path`, after making its directory, checking that no other user can replace what is in
  /// it (unless `checked` is off: --allow-insecure, for test set-ups), and clearing away a stale
  /// socket of a dead daemon.
  private static func bind(
    _ path: String, access: SectionService.Access, permissions: mode_t, checked: Bool
  ) throws
    -> Opened
  {
    let length = path.utf8.count
    guard length <= UnixSocket.maximumPathLength else {
      throw StartFailure(
        "socket path \(path) is \(length) bytes, but a Unix socket path holds at most \(UnixSocket.maximumPathLength); choose a shorter one"
      )
    }
    let directory = directoryName(of: path)
    do {
      try FileSystem.makeDirectories(directory, permissions: 0o755)
    } catch let error as PosixError {
      throw StartFailure(
        "cannot create the socket directory \(directory): \(error.errno)", errno: error.errno)
    }
    if checked, let problem = SocketDirectory.problem(socket: path) {
      throw StartFailure(problem)
    }
    try clearStale(path)
    let fd = try UnixSocket.make()
    do {
      try UnixSocket.listen(fd, path: path, permissions: permissions)
    } catch let error as PosixError where error.errno == .exists {
      // Another daemon started on the same path and got there first.
      fd.close()
      throw StartFailure(
        "another daemon is already listening on \(path); stop it first or choose another socket path")
    } catch {
      fd.close()
      throw error
    }
    return Opened(fd: fd, access: access, file: SocketFile(boundAt: path))
  }

  /// A socket file with a live daemon behind it is refused; one nobody answers on is removed.
  private static func clearStale(_ path: String) throws {
    guard let status = try FileSystem.status(path) else { return }
    guard status.isSocket else {
      throw StartFailure("\(path) exists and is not a socket; remove it or choose another socket path")
    }
    do {
      let probe = try UnixSocket.connect(path: path)
      probe.close()
      throw StartFailure(
        "another daemon is already listening on \(path); stop it first or choose another socket path")
    } catch let error as PosixError where error.errno == .connectionRefused {
      try FileSystem.remove(path)
      Log.notice("removed stale socket \(path) left by a daemon that is gone")
    }
  }
}
