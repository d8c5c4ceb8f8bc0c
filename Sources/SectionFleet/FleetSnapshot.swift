import SectionCore
import SectionShared

/// A fleet's snapshot in pieces: the whole state (the state file's format, history included)
/// at one revision, split over several etcd keys because etcd takes at most 1.5 MiB a request
/// and the state a list within the default limits may reach about 54 MB (docs/FLEET.md,
/// "Limits").
///
/// The pieces are `P snapshot/<revision, 20 digits>.<tag>/<index, 6 digits>`, written first,
/// each by a request of its own; then one small txn makes them the snapshot by putting the
/// pointer `P snapshot`:
///
/// ```
/// sectiond-snapshot 1 <revision> <tag> <pieces> <bytes> <crc32c, 8 hex digits>
/// ```
/// The tag (the writer's commit id) keeps two writers of the same revision (two hosts seeding
/// at once) apart. A reader reads the pointer and the pieces at one etcd revision, joins them
/// and checks their number, length and CRC-32C before it decodes anything.
///
/// A state that fits one key is still written as the state itself in `P snapshot` (a value
/// that starts with `{`), which a host of the version before pieces reads.
public struct FleetSnapshot: Equatable, Sendable {
  /// The sectiond revision of the state.
  public let revision: UInt64
  public let tag: String
  public let pieces: Int
  public let bytes: Int
  public let checksum: UInt32

  static let magic = "sectiond-snapshot 1 "

  /// The pointer to `state` at `revision`, split into pieces of at most `pieceSize` bytes.
  public init(state: [UInt8], revision: UInt64, tag: String, pieceSize: Int) {
    self.init(
      revision: revision, tag: tag, pieces: FleetSnapshot.pieceCount(state.count, pieceSize: pieceSize),
      bytes: state.count, checksum: CRC32C.checksum(state))
  }

  init(revision: UInt64, tag: String, pieces: Int, bytes: Int, checksum: UInt32) {
    self.revision = revision
    self.tag = tag
    self.pieces = pieces
    self.bytes = bytes
    self.checksum = checksum
  }

  static func pieceCount(_ bytes: Int, pieceSize: Int) -> Int {
    max(1, (bytes + pieceSize - 1) / pieceSize)
  }

  /// `state` cut into `pieceSize` bytes each (the last one shorter); one empty piece for an
  /// empty state, so that a snapshot always has a piece.
  public static func split(_ state: [UInt8], pieceSize: Int) -> [ArraySlice<UInt8>] {
    precondition(pieceSize > 0)
    guard !state.isEmpty else { return [state[...]] }
    return stride(from: 0, to: state.count, by: pieceSize).map {
      state[$0..<min($0 + pieceSize, state.count)]
    }
  }

  /// The state the pieces make, in the order of their keys; throws when they are not the
  /// snapshot this pointer names (a piece missing or damaged).
  public func join(_ parts: [[UInt8]]) throws(ProtocolError) -> [UInt8] {
    guard parts.count == pieces else {
      throw ProtocolError(
        .internal, "the fleet's snapshot at revision \(revision) has \(parts.count) of its \(pieces) pieces")
    }
    // The pieces' own length before any allocation: the pointer's is only a claim.
    let length = parts.reduce(0) { $0 + $1.count }
    guard length == bytes else {
      throw ProtocolError(
        .internal, "the fleet's snapshot at revision \(revision) takes \(length) bytes, not \(bytes)")
    }
    var state: [UInt8] = []
    state.reserveCapacity(length)
    for part in parts { state.append(contentsOf: part) }
    guard CRC32C.checksum(state) == checksum else {
      throw ProtocolError(.internal, "the fleet's snapshot at revision \(revision) fails its checksum")
    }
    return state
  }

  /// The pointer's value.
  public var encoded: [UInt8] {
    let hex = String(checksum, radix: 16)
    return Array(
      "\(FleetSnapshot.magic)\(revision) \(tag) \(pieces) \(bytes) \(String(repeating: "0", count: 8 - hex.count) + hex)"
        .utf8)
  }

  /// The pointer in `value`; nil when `value` is not one (the state itself, as a snapshot that
  /// fits one key is kept); throws when it is a damaged one, or names a state of more than
  /// `limit` bytes (what a start reads of a state file): a reader reads and joins the pieces by
  /// the pointer, which is etcd's input, so it is held to what a state can be before anything
  /// is read.
  public static func decode(_ value: [UInt8], limit: Int) throws(ProtocolError) -> FleetSnapshot? {
    guard value.starts(with: magic.utf8) else { return nil }
    let words = String(decoding: value[magic.utf8.count...], as: UTF8.self).split(separator: " ")
    guard words.count == 5, let revision = UInt64(words[0]), revision <= SectionModel.maxRevision,
      !words[1].isEmpty, words[1].utf8.allSatisfy(isTagByte),
      let pieces = Int(words[2]), pieces > 0, let bytes = Int(words[3]), bytes >= 0,
      pieces <= max(1, bytes),
      words[4].count == 8, let checksum = UInt32(words[4], radix: 16)
    else { throw ProtocolError(.internal, "the fleet's snapshot pointer is damaged") }
    guard bytes <= limit else {
      throw ProtocolError(
        .internal, "the fleet's snapshot pointer names \(bytes) bytes, more than a state takes (\(limit))")
    }
    return FleetSnapshot(
      revision: revision, tag: String(words[1]), pieces: pieces, bytes: bytes, checksum: checksum)
  }

  /// A tag is a writer's commit id (base 36, a dot, a counter): it becomes part of keys.
  private static func isTagByte(_ byte: UInt8) -> Bool {
    (0x30...0x39).contains(byte) || (0x61...0x7A).contains(byte) || byte == UInt8(ascii: ".")
  }

  /// The prefix of this snapshot's pieces under the snapshot prefix (`P snapshot/`).
  public var piecePrefix: [UInt8] { FleetSnapshot.padded(revision, 20) + Array(".\(tag)/".utf8) }

  /// The key of piece `index` under the snapshot prefix.
  public func pieceKey(_ index: Int) -> [UInt8] { piecePrefix + FleetSnapshot.padded(UInt64(index), 6) }

  static func padded(_ number: UInt64, _ width: Int) -> [UInt8] {
    let digits = String(number)
    return Array((String(repeating: "0", count: max(0, width - digits.count)) + digits).utf8)
  }
}
