import CSystemd
import Glibc
import Posix

/// Descriptors handed over by systemd (LISTEN_FDS, LISTEN_FDNAMES), by name: the listening
/// sockets of the socket units, and what the file descriptor store kept for this service.
public enum SocketActivation {
  public struct Inherited: Sendable {
    public enum Kind: Sendable {
      case listeningSocket
      /// A connected Unix stream socket: a client kept in the file descriptor store.
      case connectedSocket
      /// Anything else, such as a memfd kept in the store.
      case other
    }

    public let name: String
    public let fd: FileDescriptor
    public let kind: Kind
  }

  /// Every descriptor systemd passed to this process, sockets made non-blocking. Empty when
  /// the process was not socket-activated and the store is empty. Clears the LISTEN_* variables.
  public static func inherited() throws -> [Inherited] {
    var names: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?
    let count = try check(sd_listen_fds_with_names(1, &names), "sd_listen_fds_with_names")
    defer {
      if let names {
        for index in 0..<Int(count) { free(names[index]) }
        free(names)
      }
    }
    var inherited: [Inherited] = []
    for index in 0..<count {
      let fd = SD_LISTEN_FDS_START + index
      let name = names?[Int(index)].map { String(cString: $0) } ?? "unknown"
      let kind: Inherited.Kind
      if try check(sd_is_socket_unix(fd, Int32(SOCK_STREAM.rawValue), 1, nil, 0), "sd_is_socket_unix", name)
        > 0
      {
        kind = .listeningSocket
      } else if try check(
        sd_is_socket_unix(fd, Int32(SOCK_STREAM.rawValue), 0, nil, 0), "sd_is_socket_unix", name)
        > 0
      {
        kind = .connectedSocket
      } else {
        kind = .other
      }
      let descriptor = FileDescriptor(rawValue: fd)
      if kind != .other { try descriptor.setNonBlocking() }
      inherited.append(Inherited(name: name, fd: descriptor, kind: kind))
    }
    return inherited
  }
}
