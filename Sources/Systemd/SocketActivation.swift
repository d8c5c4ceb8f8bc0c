import CSystemd
import Glibc
import Posix

/// Listening sockets handed over by systemd (LISTEN_FDS, LISTEN_FDNAMES), by name.
public enum SocketActivation {
  public struct InheritedSocket: Sendable {
    public let name: String
    public let fd: FileDescriptor
  }

  /// The sockets systemd passed to this process, each checked to be a listening Unix stream
  /// socket. Empty when the process was not socket-activated. Clears the LISTEN_* variables.
  public static func inheritedSockets() throws -> [InheritedSocket] {
    var names: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?
    let count = try check(sd_listen_fds_with_names(1, &names), "sd_listen_fds_with_names")
    defer {
      if let names {
        for index in 0..<Int(count) { free(names[index]) }
        free(names)
      }
    }
    var sockets: [InheritedSocket] = []
    for index in 0..<count {
      let fd = SD_LISTEN_FDS_START + index
      let name = names?[Int(index)].map { String(cString: $0) } ?? "unknown"
      let isUnixListener = try check(
        sd_is_socket_unix(fd, Int32(SOCK_STREAM.rawValue), 1, nil, 0), "sd_is_socket_unix", name)
      guard isUnixListener > 0 else {
        throw PosixError(
          "sd_is_socket_unix", "fd \(fd) named \(name): not a listening Unix stream socket",
          errno: Errno(EINVAL))
      }
      let socket = FileDescriptor(rawValue: fd)
      try socket.setNonBlocking()
      sockets.append(InheritedSocket(name: name, fd: socket))
    }
    return sockets
  }
}
