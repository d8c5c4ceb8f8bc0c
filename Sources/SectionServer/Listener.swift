import Posix
import SectionCore
import Systemd

/// A listening socket and what clients accepted on it may do.
final class Listener {
  let fd: FileDescriptor
  let access: SectionService.Access
  /// The socket file we created and so remove on exit; nil for one systemd owns.
  let ownedPath: String?
  var source: EventSource?

  init(fd: FileDescriptor, access: SectionService.Access, ownedPath: String?) {
    self.fd = fd
    self.access = access
    self.ownedPath = ownedPath
  }

  func close() {
    source?.cancel()
    source = nil
    fd.close()
    if let ownedPath { try? FileSystem.remove(ownedPath) }
  }
}
