import SectionShared
/// What one daemon process hands the next about its connections when systemd restarts it:
/// each connection's access, subscription, and the bytes it had read but not answered or
/// rendered but not sent, so that nothing a client sent is dropped or answered twice.
///
/// The sockets themselves travel in systemd's file descriptor store; each record names its
/// socket by inode, which the next process reads back with fstat. The records travel as one
/// memfd in the same store. A plain binary format, little-endian, versioned by its first line.
public struct HandoverState: Equatable, Sendable {
  static let magic = Array("sectiond handover 1\n".utf8)

  public struct Connection: Equatable, Sendable {
    public var inode: UInt64
    public var access: SectionService.Access
    public var subscription: Subscription
    /// Inside an over-long line whose end has not arrived (`LineFramer.discarding`).
    public var discarding: Bool
    public var inputEnded: Bool
    public var quitting: Bool
    /// Input read but not handled: a partial line and whole lines not answered yet.
    public var pending: [UInt8]
    /// Replies and events rendered but not sent yet.
    public var output: [UInt8]
    /// What the client called itself (`CLIENT NAME`), for the history; nil when it did not.
    public var name: [UInt8]?

    public init(
      inode: UInt64, access: SectionService.Access, subscription: Subscription, discarding: Bool = false,
      inputEnded: Bool = false, quitting: Bool = false, pending: [UInt8] = [], output: [UInt8] = [],
      name: [UInt8]? = nil
    ) {
      self.name = name
      self.inode = inode
      self.access = access
      self.subscription = subscription
      self.discarding = discarding
      self.inputEnded = inputEnded
      self.quitting = quitting
      self.pending = pending
      self.output = output
    }
  }

  /// `fingerprint(of:)` of the sections the old process served: when the new one serves
  /// others (the config changed across the restart), subscribers are told with `!reload`.
  public var fingerprint: UInt64
  public var connections: [Connection]

  public init(fingerprint: UInt64, connections: [Connection]) {
    self.fingerprint = fingerprint
    self.connections = connections
  }

  /// FNV-1a over every id, title and item, each ended by a byte no text can hold.
  public static func fingerprint(of sections: some Sequence<Section>) -> UInt64 {
    var hash: UInt64 = 0xcbf2_9ce4_8422_2325
    func mix(_ text: String) {
      for byte in text.utf8 { hash = (hash ^ UInt64(byte)) &* 0x100_0000_01b3 }
      hash = (hash ^ 0x0A) &* 0x100_0000_01b3
    }
    for section in sections {
      mix(section.id)
      mix(section.title)
      for item in section.items { mix(item) }
      hash = (hash ^ 0x00) &* 0x100_0000_01b3
    }
    return hash
  }

  public func encode() -> [UInt8] {
    var bytes = HandoverState.magic
    append(fingerprint, to: &bytes)
    append(UInt64(connections.count), to: &bytes)
    for connection in connections {
      append(connection.inode, to: &bytes)
      var flags: UInt8 = connection.subscription.rawValue
      if connection.access == .readOnly { flags |= 1 << 2 }
      if connection.discarding { flags |= 1 << 3 }
      if connection.inputEnded { flags |= 1 << 4 }
      if connection.quitting { flags |= 1 << 5 }
      // A handover of a version before names has no such bit, and is read as before.
      if connection.name != nil { flags |= 1 << 6 }
      // A control-socket connection below edit (the access rules lowered it) carries its level
      // in a byte after its blocks; without the bit it is edit, as every handover before
      // levels reads.
      let lowered = connection.access.level != .edit && !connection.access.readOnlySocket
      if lowered { flags |= 1 << 7 }
      bytes.append(flags)
      append(UInt64(connection.pending.count), to: &bytes)
      bytes.append(contentsOf: connection.pending)
      append(UInt64(connection.output.count), to: &bytes)
      bytes.append(contentsOf: connection.output)
      if let name = connection.name {
        append(UInt64(name.count), to: &bytes)
        bytes.append(contentsOf: name)
      }
      if lowered { bytes.append(connection.access.level == .read ? 0 : 1) }
    }
    return bytes
  }

  /// A handover that cannot be read is an error: the caller then treats every connection as
  /// after a crash.
  public static func decode(_ bytes: [UInt8]) throws(ConfigError) -> HandoverState {
    var reader = Reader(bytes: bytes[...])
    guard reader.take(magic.count).elementsEqual(magic) else { throw ConfigError("not a sectiond handover") }
    let fingerprint = try reader.integer()
    let count = try reader.integer()
    var connections: [Connection] = []
    for _ in 0..<count {
      let inode = try reader.integer()
      guard let flags = reader.take(1).first, let subscription = Subscription(rawValue: flags & 3) else {
        throw ConfigError("handover truncated or damaged")
      }
      let pending = try reader.block()
      let output = try reader.block()
      let name = flags & (1 << 6) != 0 ? Array(try reader.block()) : nil
      if let name, !ClientName.isWord(name) { throw ConfigError("handover holds a damaged client name") }
      var access = flags & (1 << 2) == 0 ? SectionService.Access.control : .readOnly
      if flags & (1 << 7) != 0 {
        guard access == .control, let level = reader.take(1).first, level <= 1 else {
          throw ConfigError("handover holds a damaged access level")
        }
        access = SectionService.Access(level: level == 0 ? .read : .operate)
      }
      connections.append(
        Connection(
          inode: inode, access: access, subscription: subscription,
          discarding: flags & (1 << 3) != 0, inputEnded: flags & (1 << 4) != 0,
          quitting: flags & (1 << 5) != 0,
          pending: pending, output: output, name: name))
    }
    guard reader.bytes.isEmpty else { throw ConfigError("handover has trailing bytes") }
    return HandoverState(fingerprint: fingerprint, connections: connections)
  }

  private func append(_ value: UInt64, to bytes: inout [UInt8]) {
    for shift in stride(from: 0, to: 64, by: 8) {
      bytes.append(UInt8(truncatingIfNeeded: value >> UInt64(shift)))
    }
  }

  private struct Reader {
    var bytes: ArraySlice<UInt8>

    mutating func take(_ count: Int) -> ArraySlice<UInt8> {
      let taken = bytes.prefix(count)
      bytes = bytes.dropFirst(count)
      return taken
    }

    mutating func integer() throws(ConfigError) -> UInt64 {
      let taken = take(8)
      guard taken.count == 8 else { throw ConfigError("handover truncated") }
      return taken.reversed().reduce(0) { $0 << 8 | UInt64($1) }
    }

    mutating func block() throws(ConfigError) -> [UInt8] {
      let count = try integer()
      guard count <= UInt64(bytes.count) else { throw ConfigError("handover truncated") }
      return Array(take(Int(count)))
    }
  }
}
