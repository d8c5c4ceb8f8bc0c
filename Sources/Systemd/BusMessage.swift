import CSystemd
import Glibc
import Posix

/// A method call received on the bus, kept (referenced) until it is answered: a call whose
/// answer waits for a save outlives the handler that received it.
public final class BusCall {
  let message: OpaquePointer

  init(_ message: OpaquePointer) {
    self.message = sd_bus_message_ref(message)
  }

  deinit { sd_bus_message_unref(message) }

  /// The member called (`Toggle`, `Get`...).
  public var member: String { sd_bus_message_get_member(message).map { String(cString: $0) } ?? "" }

  /// The caller's unique name (`:1.42`); unique names are never reused while the bus runs.
  public var sender: String { sd_bus_message_get_sender(message).map { String(cString: $0) } ?? "" }

  public func isMethodCall(interface: String, member: String) -> Bool {
    sd_bus_message_is_method_call(message, interface, member) > 0
  }

  /// Reads the next argument, of type `s` (also inside a variant entered with `enterVariant`).
  /// A string argument, copied only when it holds at most `bytes` bytes; nil when it holds
  /// more. An argument can be as large as a message (32 MB on the system bus, 1 GB on a
  /// session bus): one past a line's length is refused without a copy.
  public func readString(atMost bytes: Int) throws -> String? {
    var value: UnsafePointer<CChar>?
    try check(
      sd_bus_message_read_basic(message, CChar(UInt8(ascii: "s")), &value), "sd_bus_message_read_basic")
    return strnlen(value!, bytes + 1) > bytes ? nil : String(cString: value!)
  }

  public func readUInt32() throws -> UInt32 {
    var value: UInt32 = 0
    try check(
      sd_bus_message_read_basic(message, CChar(UInt8(ascii: "u")), &value), "sd_bus_message_read_basic")
    return value
  }

  public func readUInt64() throws -> UInt64 {
    var value: UInt64 = 0
    try check(
      sd_bus_message_read_basic(message, CChar(UInt8(ascii: "t")), &value), "sd_bus_message_read_basic")
    return value
  }

  /// An `as` argument, read only while it holds at most `count` strings of `bytes` bytes in
  /// all; nil as soon as it holds more. A caller's array can be as large as a message (32 MB on
  /// the system bus, 1 GB on a session bus): one past a bound is refused without copying the
  /// rest, in the time its first strings take.
  public func readStrings(atMost count: Int, bytes: Int) throws -> [String]? {
    try enter("a", "s")
    var strings: [String] = []
    var total = 0
    var value: UnsafePointer<CChar>?
    while try check(
      sd_bus_message_read_basic(message, CChar(UInt8(ascii: "s")), &value), "sd_bus_message_read_basic")
      > 0
    {
      total += strlen(value!)
      guard strings.count < count, total <= bytes else { return nil }
      strings.append(String(cString: value!))
    }
    try leave()
    return strings
  }

  /// Enters a variant holding `contents` (Properties.Set's value); false when it holds another type.
  public func enterVariant(_ contents: String) -> Bool {
    (try? enter("v", contents)) == true
  }

  /// Back to the first argument, for sd-bus to read the call itself.
  public func rewind() {
    _ = sd_bus_message_rewind(message, 1)
  }

  /// Sends the method return, its arguments written by `body`.
  public func reply(_ body: (inout BusWriter) throws -> Void) throws {
    var reply: OpaquePointer?
    try check(sd_bus_message_new_method_return(message, &reply), "sd_bus_message_new_method_return")
    defer { sd_bus_message_unref(reply) }
    var writer = BusWriter(message: reply!)
    try body(&writer)
    try check(sd_bus_send(nil, reply, nil), "sd_bus_send")
  }

  /// Sends an error reply: `name` is a D-Bus error name, `text` says what went wrong.
  public func replyError(_ name: String, _ text: String) throws {
    var error = sd_bus_error()
    defer { sd_bus_error_free(&error) }
    _ = sd_bus_error_set(&error, name, text)
    try check(sd_bus_reply_method_error(message, &error), "sd_bus_reply_method_error")
  }

  /// The caller's uid and groups as the bus daemon knows them: it read them from the
  /// caller's socket (SO_PEERCRED, SO_PEERGROUPS) when the caller connected, and answers
  /// GetConnectionCredentials with them. Asked directly: sd_bus_query_sender_creds of
  /// systemd 252 reads the uid from that answer but not `UnixGroupIDs`, and would fill the
  /// groups in from /proc, which the hardened unit hides (ProtectProc=invisible).
  ///
  /// Asked without waiting: the loop goes on serving while the bus daemon answers (a busy
  /// one may take seconds), and `answer` runs with the reply, or with the error of a bus
  /// daemon that did not answer within `credentialsTimeout`. It does not run when the
  /// connection to the bus goes first.
  public func askSenderCredentials(
    _ answer: @escaping (Result<BusCredentials, any Error>) -> Void
  ) throws {
    try callAsync(
      "org.freedesktop.DBus", "/org/freedesktop/DBus", "org.freedesktop.DBus", "GetConnectionCredentials",
      timeout: BusCall.credentialsTimeout, arguments: { [sender] writer in try writer.append(sender) }
    ) { [sender] reply in
      answer(reply.flatMap { reply in Result { try BusCall(reply).readCredentials(of: sender) } })
    }
  }

  /// A bus daemon that does not answer this soon is not working; the call is refused.
  static let credentialsTimeout: UInt64 = 5_000_000

  /// Calls `member` on another peer without waiting: `answer` runs with its reply, or with the
  /// error reply (`BusErrorReply`) it or the bus daemon sent, a timeout's among them. It does
  /// not run when the connection to the bus goes first.
  func callAsync(
    _ destination: String, _ path: String, _ interface: String, _ member: String, timeout: UInt64,
    arguments: (inout BusWriter) throws -> Void, answer: @escaping (Result<OpaquePointer, any Error>) -> Void
  ) throws {
    let bus = sd_bus_message_get_bus(message)
    var call: OpaquePointer?
    try check(
      sd_bus_message_new_method_call(bus, &call, destination, path, interface, member),
      "sd_bus_message_new_method_call")
    defer { sd_bus_message_unref(call) }
    var writer = BusWriter(message: call!)
    try arguments(&writer)
    let box = Unmanaged.passRetained(PendingReply(answer, call: member))
    var slot: OpaquePointer?
    let result = sd_bus_call_async(bus, &slot, call, pendingReplyThunk, box.toOpaque(), timeout)
    guard result >= 0 else {
      box.release()
      throw PosixError(member, sender, errno: Errno(-result))
    }
    // The slot belongs to the bus from here on and releases the box when it goes: after the
    // answer, or with the connection.
    _ = sd_bus_slot_set_destroy_callback(slot, { Unmanaged<PendingReply>.fromOpaque($0!).release() })
    _ = sd_bus_slot_set_floating(slot, 1)
    sd_bus_slot_unref(slot)
  }

  /// The `UnixUserID`, `ProcessID` and `UnixGroupIDs` of GetConnectionCredentials' `a{sv}`.
  fileprivate func readCredentials(of sender: String) throws -> BusCredentials {
    var uid: uid_t?
    var pid: pid_t?
    var groups: [gid_t] = []
    try enter("a", "{sv}")
    while try enter("e", "sv") {
      switch try readString(atMost: 255) {
      case "UnixUserID":
        try enter("v", "u")
        uid = try readUInt32()
        try leave()
      case "ProcessID":
        try enter("v", "u")
        pid = pid_t(truncatingIfNeeded: try readUInt32())
        try leave()
      case "UnixGroupIDs":
        try enter("v", "au")
        try enter("a", "u")
        var gid: UInt32 = 0
        while try check(sd_bus_message_read_basic(message, CChar(UInt8(ascii: "u")), &gid), "read_basic") > 0
        {
          groups.append(gid)
        }
        try leave()
        try leave()
      default:
        try check(sd_bus_message_skip(message, "v"), "sd_bus_message_skip")
      }
      try leave()
    }
    try leave()
    guard let uid else { throw PosixError("GetConnectionCredentials", sender, errno: Errno(ENODATA)) }
    return BusCredentials(uid: uid, pid: pid, groups: groups)
  }

  /// Enters a container; false at the end of the array it would be an element of.
  @discardableResult
  func enter(_ type: Unicode.Scalar, _ contents: String) throws -> Bool {
    try check(
      sd_bus_message_enter_container(message, CChar(type.value), contents), "sd_bus_message_enter_container")
      > 0
  }

  func leave() throws {
    try check(sd_bus_message_exit_container(message), "sd_bus_message_exit_container")
  }
}

/// Writes the arguments of an outgoing message (a method return, a signal, a property value).
public struct BusWriter {
  let message: OpaquePointer

  public mutating func append(_ value: String) throws {
    try value.withCString { try appendBasic("s", $0) }
  }

  /// An `s` of UTF-8 bytes, copied with its NUL onto the stack (no String, no heap).
  public mutating func append(utf8 bytes: UnsafeBufferPointer<UInt8>) throws {
    try withUnsafeTemporaryAllocation(of: UInt8.self, capacity: bytes.count + 1) { buffer in
      _ = buffer.initialize(from: bytes)
      buffer[bytes.count] = 0
      try appendBasic("s", buffer.baseAddress!)
    }
  }

  public mutating func append(_ value: UInt64) throws {
    var value = value
    try appendBasic("t", &value)
  }

  public mutating func append(_ value: UInt32) throws {
    var value = value
    try appendBasic("u", &value)
  }

  public mutating func append(_ value: Bool) throws {
    var value: Int32 = value ? 1 : 0
    try appendBasic("b", &value)
  }

  /// An `as` of `strings`.
  public mutating func append(_ strings: some Sequence<String>) throws {
    try container("a", "s") { writer in
      for string in strings { try writer.append(string) }
    }
  }

  /// A container (`a`, `r` for a struct, `v`) of `contents`, its elements written by `body`.
  public mutating func container(
    _ type: Unicode.Scalar, _ contents: String, _ body: (inout BusWriter) throws -> Void
  ) throws {
    try check(
      sd_bus_message_open_container(message, CChar(type.value), contents), "sd_bus_message_open_container")
    try body(&self)
    try check(sd_bus_message_close_container(message), "sd_bus_message_close_container")
  }

  private func appendBasic(_ type: Unicode.Scalar, _ pointer: UnsafeRawPointer) throws {
    try check(sd_bus_message_append_basic(message, CChar(type.value), pointer), "sd_bus_message_append_basic")
  }
}

/// Who a bus caller is, as the bus daemon says: its uid, its pid when known, its groups.
public struct BusCredentials: Sendable {
  public let uid: uid_t
  public let pid: pid_t?
  public let groups: [gid_t]
}

/// What to do with the reply to `callAsync`, kept by the call's slot.
private final class PendingReply {
  let answer: (Result<OpaquePointer, any Error>) -> Void
  let call: String

  init(_ answer: @escaping (Result<OpaquePointer, any Error>) -> Void, call: String) {
    self.answer = answer
    self.call = call
  }
}

/// An error reply to a call sectiond made: its D-Bus error name, and its text.
public struct BusErrorReply: Error, CustomStringConvertible {
  public let call: String
  public let name: String
  public let message: String

  public var description: String { "\(call): \(name): \(message)" }
}

private let pendingReplyThunk: sd_bus_message_handler_t = { reply, userdata, _ in
  let pending = Unmanaged<PendingReply>.fromOpaque(userdata!).takeUnretainedValue()
  if let error = sd_bus_message_get_error(reply) {
    pending.answer(
      .failure(
        BusErrorReply(
          call: pending.call, name: error.pointee.name.map { String(cString: $0) } ?? "",
          message: error.pointee.message.map { String(cString: $0) } ?? "")))
  } else {
    pending.answer(.success(reply!))
  }
  return 0
}
