import Testing

@testable import SectionCore

@Suite struct HandoverStateTests {
  let state = HandoverState(
    fingerprint: HandoverState.fingerprint(of: abc().sections),
    connections: [
      .init(inode: 7, access: .control, subscription: .none, pending: Array("PING\nLI".utf8)),
      .init(
        inode: UInt64.max, access: .readOnly, subscription: .owedSnapshot, discarding: true, inputEnded: true,
        quitting: true, output: Array("OK\n!opened 3 0 a\n".utf8)),
      .init(inode: 0, access: .readOnly, subscription: .live),
    ])

  @Test func roundTrip() throws {
    #expect(try HandoverState.decode(state.encode()) == state)
    #expect(
      try HandoverState.decode(HandoverState(fingerprint: 0, connections: []).encode()).connections.isEmpty)
  }

  /// A client's name (CLIENT NAME) goes across a restart with its connection; a record
  /// without names (written before them) reads as before.
  @Test func namesGoAcross() throws {
    var named = state
    named.connections[0].name = Array("waybar".utf8)
    let decoded = try HandoverState.decode(named.encode())
    #expect(decoded == named && decoded.connections[0].name == Array("waybar".utf8))
    #expect(try HandoverState.decode(state.encode()).connections.allSatisfy { $0.name == nil })
    named.connections[0].name = Array("bad name".utf8)
    #expect(throws: ConfigError.self) { try HandoverState.decode(named.encode()) }
  }

  /// A control-socket connection's level goes across a restart; a record of the edit level
  /// (and every record written before levels) has no level byte.
  @Test func levelsGoAcross() throws {
    var lowered = state
    lowered.connections.append(.init(inode: 9, access: .init(level: .operate), subscription: .live))
    lowered.connections.append(
      .init(inode: 10, access: .init(level: .read), subscription: .none, name: Array("kiosk".utf8)))
    let bytes = lowered.encode()
    #expect(try HandoverState.decode(bytes) == lowered)
    #expect(bytes.count == state.encode().count + 2 * (8 + 1 + 8 + 8 + 1) + (8 + 5))
    // A level byte past read and operate is damage, not a level.
    var damaged = bytes
    damaged[damaged.count - 1] = 2
    #expect(throws: ConfigError.self) { try HandoverState.decode(damaged) }
  }

  @Test(arguments: [1, 20, 40, 100])
  func aTruncatedRecordIsRefused(cut: Int) {
    let bytes = state.encode()
    #expect(throws: ConfigError.self) { try HandoverState.decode(Array(bytes.dropLast(cut))) }
  }

  @Test func anythingElseIsRefused() {
    #expect(throws: ConfigError.self) { try HandoverState.decode(Array("{\"format\":1}".utf8)) }
    #expect(throws: ConfigError.self) { try HandoverState.decode(state.encode() + [0]) }
  }

  @Test func theFingerprintSeesTitlesItemsAndOrder() {
    let sections = abc().sections
    let base = HandoverState.fingerprint(of: sections)
    #expect(HandoverState.fingerprint(of: sections) == base)
    #expect(HandoverState.fingerprint(of: sections.reversed()) != base)
    var renamed = sections
    renamed[0] = Section(id: "a", title: "Other", items: sections[0].items)
    #expect(HandoverState.fingerprint(of: renamed) != base)
    var moved = sections
    moved[0] = Section(id: "a", title: "A", items: ["a1a2"])
    #expect(HandoverState.fingerprint(of: moved) != base)
  }
}
