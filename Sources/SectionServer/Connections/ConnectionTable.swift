/// The open connections by descriptor number. Every client event comes from epoll with its
/// descriptor, and finding its connection is an index into an array, not a hash: a
/// dictionary's lookup cost a pipelined PING about 100 of its 1,800 instructions (callgrind).
/// Descriptors are small and reused lowest first, so the array is as long as the most
/// connections open at once, plus the daemon's own descriptors.
struct ConnectionTable {
  private var slots: [Connection?] = []
  private(set) var count = 0

  subscript(fd fd: Int32) -> Connection? {
    get { fd >= 0 && Int(fd) < slots.count ? slots[Int(fd)] : nil }
    set {
      let index = Int(fd)
      if index >= slots.count { slots.append(contentsOf: repeatElement(nil, count: index + 1 - slots.count)) }
      count += (newValue == nil ? 0 : 1) - (slots[index] == nil ? 0 : 1)
      slots[index] = newValue
    }
  }

  /// The open connections, in descriptor order.
  var values: [Connection] { slots.compactMap { $0 } }
}
