/// How many clients may be connected at once, in all and on the read-only socket.
///
/// The read-only socket is open to every local user, so it may not take every slot: the
/// slots above `readOnly` are kept for the control socket, so that an administrator is
/// never answered `ERR BUSY` because of idle viewers.
struct ClientLimits: Equatable {
  var total: Int
  var readOnly: Int

  /// `readOnly` defaults to all but a sixteenth of `total` (960 of 1024).
  init(total: Int, readOnly: Int? = nil) {
    self.total = total
    self.readOnly = min(readOnly ?? (total - total / 16), total)
  }
}
