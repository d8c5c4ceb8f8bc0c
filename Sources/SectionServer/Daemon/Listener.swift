import Posix
import SectionCore
import Systemd

/// A listening socket and what clients accepted on it may do.
final class Listener {
  let fd: FileDescriptor
  let access: SectionService.Access
  /// The socket file we created and so remove on exit; nil for one systemd owns.
  let file: SocketFile?
  var source: EventSource?

  init(fd: FileDescriptor, access: SectionService.Access, file: SocketFile?) {
    self.fd = fd
    self.access = access
    self.file = file
  }

  func close() {
    source?.cancel()
    source = nil
    fd.close()
    file?.removeIfStillOurs()
  }
}

/// A socket file this daemon bound, remembered by inode: if another daemon has since
/// replaced it (someone removed ours and started a second one), it is not ours to remove.
struct SocketFile {
  let path: String
  let device: UInt64
  let inode: UInt64

  init?(boundAt path: String) {
    guard let status = try? FileSystem.status(path) else { return nil }
    self.path = path
    device = status.device
    inode = status.inode
  }

  func removeIfStillOurs() {
    guard let status = try? FileSystem.status(path), status.device == device, status.inode == inode else {
      return
    }
    try? FileSystem.remove(path)
  }
}
