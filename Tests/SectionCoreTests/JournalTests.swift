import Testing

@testable import SectionCore

@Suite struct JournalTests {
  /// A model with every kind of change made to it, the changes, and their journal.
  func edited() throws -> (SectionModel, [Change], [UInt8]) {
    var model = SectionModel(config: abc(.exclusive))
    let changes = try editEveryWay(&model)
    var journal: [UInt8] = []
    for change in changes { Journal.append(change, to: &journal) }
    Journal.appendCommit(revision: model.revision, to: &journal, groupStart: 0)
    return (model, changes, journal)
  }

  /// Groups of one line each, committed as the store commits them.
  func journal(_ groups: [(String, UInt64)]) -> [UInt8] {
    var bytes: [UInt8] = []
    for (lines, revision) in groups {
      let start = bytes.count
      bytes += Array(lines.utf8)
      Journal.appendCommit(revision: revision, to: &bytes, groupStart: start)
    }
    return bytes
  }

  @Test func theChecksumIsCRC32C() {
    #expect(CRC32C.checksum(Array("123456789".utf8)) == 0xE306_9283)
    #expect(CRC32C.checksum([UInt8]()) == 0)
    // Eight bytes a step give what a bit at a time gives, at every length and alignment.
    func bitwise(_ bytes: ArraySlice<UInt8>) -> UInt32 {
      var crc: UInt32 = 0xFFFF_FFFF
      for byte in bytes {
        crc ^= UInt32(byte)
        for _ in 0..<8 { crc = crc & 1 == 1 ? (crc >> 1) ^ 0x82F6_3B78 : crc >> 1 }
      }
      return ~crc
    }
    let bytes = (0..<300).map { UInt8(truncatingIfNeeded: $0 &* 151 &+ 7) }
    for start in 0..<9 {
      for end in stride(from: start, through: bytes.count, by: 7) {
        #expect(CRC32C.checksum(bytes[start..<end]) == bitwise(bytes[start..<end]))
      }
    }
    #expect(CRC32C.checksum(bytes.lazy.map { $0 }) == bitwise(bytes[...]))
  }

  @Test func everyChangeReadsBack() throws {
    let (model, changes, journal) = try edited()
    let contents = Journal.decode(journal)
    #expect(contents.stop == nil)
    #expect(contents.groups.count == 1)
    #expect(contents.groups[0].revision == model.revision)
    #expect(contents.groups[0].changes.map(Journal.line) == changes.map(Journal.line))
    #expect(contents.groups[0].changes.count == 13)
    #expect(String(decoding: journal.suffix(19), as: UTF8.self).hasPrefix("commit \(model.revision) "))
  }

  @Test func replayLeadsToTheSameState() throws {
    let (model, _, journal) = try edited()
    let start = SavedState(SectionModel(config: abc(.exclusive)))
    let replayed = start.replaying(Journal.decode(journal).groups)
    #expect(replayed.stop == nil)
    #expect(replayed.state == SavedState(model))
    #expect(SectionModel(config: abc(.exclusive), saved: replayed.state) == model)
  }

  @Test func groupsTheStateFileHoldsAreSkipped() throws {
    let (model, _, journal) = try edited()
    let replayed = SavedState(model).replaying(Journal.decode(journal).groups)
    #expect(replayed.state == SavedState(model) && replayed.stop == nil)
  }

  /// A crash or a power cut may end the journal anywhere: what is left of the last group is
  /// dropped whole, never read as something else, and never costs the groups before it.
  @Test func aTornLastGroupIsDroppedWhole() throws {
    let start = SavedState(SectionModel(config: abc(.exclusive)))
    let twoGroups = journal([("open 1 0\n", 1), ("close 2 0\nopen 3 1\n", 3)])
    let firstEnd = journal([("open 1 0\n", 1)]).count
    for cut in 0..<twoGroups.count {
      let contents = Journal.decode(Array(twoGroups[..<cut]))
      #expect((contents.stop == nil) == (cut == 0 || cut == firstEnd), "cut at \(cut)")
      #expect(contents.stop?.intactGroupsAfter != true)
      let state = start.replaying(contents.groups)
      #expect(state.stop == nil)
      #expect(state.state.revision == (cut < firstEnd ? 0 : 1), "cut at \(cut)")
    }
    // Torn in the middle, its end written (pages of one write land out of order): zeros, or
    // any byte changed, fail the checksum.
    for position in firstEnd..<(twoGroups.count - 1) {
      var torn = twoGroups
      torn[position] = torn[position] == 0x30 ? 0x31 : 0x30
      let contents = Journal.decode(torn)
      #expect(contents.groups.map(\.revision) == [1], "changed byte \(position)")
      #expect(contents.stop?.intactGroupsAfter == false)
    }
    var zeroed = twoGroups
    for position in firstEnd..<(firstEnd + 4) { zeroed[position] = 0 }
    #expect(Journal.decode(zeroed).groups.map(\.revision) == [1])
  }

  /// Damage before intact groups: the groups before it are kept, and the stop says that
  /// intact ones were left out (the store then keeps the journal for inspection).
  @Test func damageKeepsTheIntactGroupsBeforeIt() throws {
    var bytes = journal([("open 1 0\n", 1), ("open 2 1\n", 2), ("close 3 0\n", 3)])
    let second = journal([("open 1 0\n", 1)]).count
    bytes[second] = 0x78  // "xpen 2 1"
    let contents = Journal.decode(bytes)
    #expect(contents.groups.map(\.revision) == [1])
    #expect(contents.stop?.intactGroupsAfter == true)
    #expect(contents.stop?.line == 3)
  }

  @Test func journalsWrittenBeforeChecksumsStillLoad() throws {
    let old = Journal.decode(Array("open 1 0\ncommit 1\nclose 2 0\ncommit 2\nopen 3".utf8))
    #expect(old.groups.map(\.revision) == [1, 2])
    #expect(old.stop?.intactGroupsAfter == false)
    // Once a journal has checksums, a group without one is not trusted.
    var mixed = journal([("open 1 0\n", 1)])
    mixed += Array("close 2 0\ncommit 2\n".utf8)
    #expect(Journal.decode(mixed).groups.map(\.revision) == [1])
  }

  @Test func aJournalOfAnotherListStopsTheReplay() throws {
    let (_, _, journal) = try edited()
    let other = SavedState(SectionModel(config: config(.multi, [("z", [], false)])))
    let replayed = other.replaying(Journal.decode(journal).groups)
    #expect(replayed.state == other)
    #expect(replayed.stop != nil)
    #expect(Journal.decode(Array("open x 1\ncommit 1\n".utf8)).groups.isEmpty)
    #expect(Journal.decode(Array("frob 1 1\ncommit 1\n".utf8)).groups.isEmpty)
  }

  /// Groups that do not follow on (lost between, or from another run) stop the replay where
  /// they start; what came before is kept.
  @Test func aGapStopsTheReplayAfterTheGroupsBeforeIt() throws {
    let start = SavedState(SectionModel(config: abc(.exclusive)))
    let groups = Journal.decode(journal([("open 1 0\n", 1), ("open 3 1\n", 3)])).groups
    let replayed = start.replaying(groups)
    #expect(replayed.state.revision == 1)
    #expect(replayed.stop?.contains("does not follow revision 1") == true)
    // A group that fails half-way leaves none of it applied.
    let failing = Journal.decode(journal([("open 1 0\n", 1), ("close 2 0\nopen 3 9\n", 3)])).groups
    let partly = start.replaying(failing)
    #expect(partly.state.revision == 1 && partly.stop != nil)
  }
}
