import Testing

@testable import SectionCore
@testable import SectionFleet

/// A fleet's snapshot in pieces (`FleetSnapshot`): what is split is joined back byte for byte,
/// and a piece missing, reordered or damaged is found before anything is decoded.
@Suite struct FleetSnapshotTests {
  /// Bytes that differ from piece to piece, so that a reordering shows.
  private func bytes(_ count: Int) -> [UInt8] {
    (0..<count).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ $0 >> 8) }
  }

  @Test func splitAndJoinGiveBackTheState() throws {
    for count in [0, 1, 999, 1000, 1001, 3500, 12_000] {
      let state = bytes(count)
      let pointer = FleetSnapshot(state: state, revision: 42, tag: "b.1", pieceSize: 1000)
      let pieces = FleetSnapshot.split(state, pieceSize: 1000)
      #expect(pieces.count == pointer.pieces)
      #expect(pieces.count == max(1, (count + 999) / 1000))
      #expect(pieces.allSatisfy { $0.count <= 1000 })
      #expect(try pointer.join(pieces.map(Array.init)) == state)
    }
  }

  @Test func aPieceMissingReorderedOrDamagedIsRefused() throws {
    let state = bytes(3500)
    let pointer = FleetSnapshot(state: state, revision: 7, tag: "b.2", pieceSize: 1000)
    let pieces = FleetSnapshot.split(state, pieceSize: 1000).map(Array.init)
    #expect(throws: ProtocolError.self) { try pointer.join(Array(pieces.dropLast())) }
    #expect(throws: ProtocolError.self) { try pointer.join([pieces[1], pieces[0], pieces[2], pieces[3]]) }
    var damaged = pieces
    damaged[2][17] ^= 1
    #expect(throws: ProtocolError.self) { try pointer.join(damaged) }
    var shorter = pieces
    shorter[3].removeLast()
    #expect(throws: ProtocolError.self) { try pointer.join(shorter) }
  }

  @Test func thePointerReadsBackAndTheStateItselfIsNoPointer() throws {
    let pointer = FleetSnapshot(state: bytes(2_500_000), revision: 123_456, tag: "k3x.9", pieceSize: 1 << 20)
    #expect(
      String(decoding: pointer.encoded, as: UTF8.self).hasPrefix(
        "sectiond-snapshot 1 123456 k3x.9 3 2500000 "))
    #expect(try FleetSnapshot.decode(pointer.encoded, limit: 1 << 30) == pointer)
    // A snapshot that fits one key is the state file's JSON, as hosts before pieces wrote it.
    #expect(try FleetSnapshot.decode(Array(#"{"format":2,"revision":3}"#.utf8), limit: 1 << 30) == nil)
    for damaged in [
      "sectiond-snapshot 1 12 k 3 2500000", "sectiond-snapshot 1 12 k 0 10 00000000",
      "sectiond-snapshot 1 x k 1 10 00000000", "sectiond-snapshot 1 12 k 1 10 0000zz00",
    ] {
      #expect(throws: ProtocolError.self) { try FleetSnapshot.decode(Array(damaged.utf8), limit: 1 << 30) }
    }
  }

  /// The pointer is etcd's input: what it claims is held to a state's limit before anything is
  /// read, and the pieces' own length is checked before the state is allocated (a pointer of
  /// 2^62 bytes with one piece once made every host abort in `join`).
  @Test func aPointerClaimingMoreThanAStateIsRefusedBeforeAnyAllocation() throws {
    let huge = "sectiond-snapshot 1 5 evil.1 1 4611686018427387904 00000000"
    #expect(throws: ProtocolError.self) { try FleetSnapshot.decode(Array(huge.utf8), limit: 1 << 30) }
    for badTag in ["sectiond-snapshot 1 5 a/b 1 10 00000000", "sectiond-snapshot 1 5 \u{1b}x 1 10 00000000"] {
      #expect(throws: ProtocolError.self) { try FleetSnapshot.decode(Array(badTag.utf8), limit: 1 << 30) }
    }
    let claimed = FleetSnapshot(revision: 5, tag: "evil.1", pieces: 1, bytes: 1 << 62, checksum: 0)
    #expect(throws: ProtocolError.self) { try claimed.join([bytes(10)]) }
  }

  /// etcd returns a range in the order of its keys: piece 10 must come after piece 9, and
  /// every piece of a snapshot after those of any older one (the txn that makes a snapshot
  /// current deletes the keys before its own).
  @Test func pieceKeysSortInTheirOrder() {
    let pointer = FleetSnapshot(state: bytes(30), revision: 999, tag: "b.1", pieceSize: 1)
    let keys = (0..<pointer.pieces).map { pointer.pieceKey($0) }
    #expect(
      keys.map { String(decoding: $0, as: UTF8.self) }.sorted()
        == keys.map { String(decoding: $0, as: UTF8.self) })
    let newer = FleetSnapshot(state: bytes(30), revision: 1000, tag: "a.1", pieceSize: 1)
    #expect(String(decoding: newer.pieceKey(0), as: UTF8.self) > String(decoding: keys.last!, as: UTF8.self))
    #expect(String(decoding: keys[0], as: UTF8.self) == "00000000000000000999.b.1/000000")
  }

  /// A list's whole state file, larger than a piece, comes back as the same state.
  @Test func aStateFileLargerThanAPieceComesBack() throws {
    let harness = Harness(abc(), history: History(capacity: 100))
    for n in 0..<200 {
      _ = harness.send("INSERT end s\(n) " + String(repeating: "t", count: 500))
    }
    var state: [UInt8] = []
    harness.service.encodeState(into: &state)
    #expect(state.count > 100_000)
    let pointer = FleetSnapshot(
      state: state, revision: harness.service.model.revision, tag: "b.3", pieceSize: 16_384)
    let pieces = FleetSnapshot.split(state, pieceSize: 16_384).map(Array.init)
    let decoded = try SavedState.decode(try pointer.join(pieces))
    #expect(decoded.revision == harness.service.model.revision)
    #expect(decoded.list?.count == 203)
    #expect(decoded.history.count == 100)
  }
}
