import SectionCore
import SectionShared

/// One group commit of a fleet (sectiond over etcd), as the value of its `log/<revision>` key:
/// what every host applies, in the order of the revisions. The group's changes travel as the
/// journal writes them (`by` lines with who made them, the change lines, the checksummed
/// `commit` line), after a header that names the host it came through and the id of the
/// commit, by which a host finds its own group after a commit whose outcome it could not know.
///
/// ```
/// sectiond-fleet 1 <revision> <host> <commit id>
/// by 2026-12-04T23:50:01.123Z socket 0 4242 sectionctl@alpha
/// open 8 2
/// commit 8 5f0e8a1c
/// ```
/// A group that replaced the list (a reload) is the whole state after it instead, as the state
/// file holds it: `sectiond-fleet 1 <revision> <host> <commit id> state <n>`, then the group's
/// events (`n` bytes), then the state.
///
/// Whoever can write the prefix writes these bytes: `decode` holds every line to the rules of
/// a request's text (UTF-8, no control characters), the group to its checksum and the state to
/// the state file's checks, and keeps nothing of the events but where the group began; what
/// subscribers get is rendered by the host that applies the entry.
public struct FleetEntry {
  public enum Body {
    /// The changes, and who made each (by revision, from the `by` lines).
    case changes([Change], authors: [UInt64: SavedAuthor])
    /// The state after the group, as `SavedState.decode` reads it, and the revision of the
    /// group's first change (its first event's), so that the entry is applied only where it
    /// follows on.
    case state(SavedState, first: UInt64)
  }

  /// The revision the group committed: its last change's.
  public let revision: UInt64
  public let host: String
  public let commit: String
  public let body: Body

  static let magic = "sectiond-fleet 1 "

  /// The words of a line, separated by runs of spaces and tabs, as a request's are; found as
  /// they are read, without an array of them (every host reads every entry's header).
  static func words(_ line: ArraySlice<UInt8>) -> some IteratorProtocol<ArraySlice<UInt8>> {
    line.lazy.split(whereSeparator: { $0 == 0x20 || $0 == 0x09 }).makeIterator()
  }

  /// The entry of `group`, committed through `host` as `commit`; `state`, the whole state after
  /// it (`SectionService.encodeState`), when the group must be saved whole.
  public static func encode(
    _ group: SavedGroup, host: String, commit: String, state: (inout [UInt8]) -> Void
  ) -> [UInt8] {
    var bytes = Array("\(magic)\(group.revision) \(host) \(commit)".utf8)
    if group.needsSnapshot {
      bytes.append(contentsOf: " state \(group.events.count)\n".utf8)
      bytes.append(contentsOf: group.events)
      // The encoder starts its buffer afresh.
      var encoded: [UInt8] = []
      state(&encoded)
      return bytes + encoded
    }
    bytes.append(0x0A)
    let start = bytes.count
    bytes.append(contentsOf: group.journal)
    Journal.appendCommit(revision: group.revision, to: &bytes, groupStart: start)
    return bytes
  }

  /// The entry in `bytes`; throws what is wrong with it (another format, a damaged group, text
  /// a request could not hold).
  public static func decode(_ bytes: [UInt8]) throws(ProtocolError) -> FleetEntry {
    guard let newline = bytes.firstIndex(of: 0x0A), bytes.starts(with: magic.utf8) else {
      throw ProtocolError(.internal, "not a sectiond fleet entry")
    }
    if let problem = Request.characterProblem(bytes[..<newline]) {
      throw ProtocolError(.internal, "the fleet entry's header: \(problem.message)")
    }
    var words = FleetEntry.words(bytes[magic.utf8.count..<newline])
    guard let revision = words.next().flatMap(RequestParser.revision), revision > 0,
      revision <= SectionModel.maxRevision, let host = words.next(), let commit = words.next()
    else { throw ProtocolError(.internal, "a fleet entry's header is damaged") }
    let kind = words.next()
    let rest = Array(bytes[(newline + 1)...])
    let body: Body
    if let kind {
      guard kind.elementsEqual("state".utf8),
        let count = words.next().flatMap(RequestParser.revision).flatMap({ Int(exactly: $0) }),
        count <= rest.count, words.next() == nil
      else {
        throw ProtocolError(.internal, "a fleet entry of an unknown kind")
      }
      let first = try firstRevision(ofEvents: rest[..<count], through: revision)
      let state: SavedState
      do {
        state = try SavedState.decode(rest[count...])
      } catch {
        throw ProtocolError(.internal, "the state of the fleet entry at revision \(revision): \(error)")
      }
      guard state.revision == revision else {
        throw ProtocolError(
          .internal, "the fleet entry at revision \(revision) holds the state at revision \(state.revision)")
      }
      body = .state(state, first: first)
    } else {
      try checkLines(rest, revision: revision)
      let contents = Journal.decode(rest)
      guard contents.stop == nil, contents.groups.count == 1, contents.groups[0].revision == revision,
        let last = contents.groups[0].changes.last, last.revision == revision,
        zip(contents.groups[0].changes, contents.groups[0].changes.dropFirst()).allSatisfy({
          $1.revision == $0.revision + 1
        })
      else {
        throw ProtocolError(
          .internal,
          "the fleet entry at revision \(revision) is damaged" + (contents.stop.map { ": \($0)" } ?? ""))
      }
      body = .changes(contents.groups[0].changes, authors: contents.authors)
    }
    return FleetEntry(
      revision: revision, host: String(decoding: host, as: UTF8.self),
      commit: String(decoding: commit, as: UTF8.self), body: body)
  }

  /// Every line of a group's journal holds only what a request may (the `by` lines, whose
  /// names reach every host's HISTORY, included).
  private static func checkLines(_ bytes: [UInt8], revision: UInt64) throws(ProtocolError) {
    var start = 0
    var number = 1
    while start < bytes.count {
      let end = bytes[start...].firstIndex(of: 0x0A) ?? bytes.count
      if let problem = Request.characterProblem(bytes[start..<end]) {
        throw ProtocolError(
          .internal, "the fleet entry at revision \(revision), line \(number): \(problem.message)")
      }
      start = end + 1
      number += 1
    }
  }

  /// The revision of the first of a reload's events (`!<event> <revision> …` lines, one a
  /// change, so their revisions follow on and the last is the group's `revision`): where the
  /// group began. A group cannot jump revisions: each of its changes has an event.
  private static func firstRevision(ofEvents events: ArraySlice<UInt8>, through revision: UInt64)
    throws(ProtocolError) -> UInt64
  {
    var first: UInt64?
    var previous: UInt64?
    var start = events.startIndex
    while start < events.endIndex {
      let end = events[start...].firstIndex(of: 0x0A) ?? events.endIndex
      let line = events[start..<end]
      var words = FleetEntry.words(line)
      guard Request.characterProblem(line) == nil, line.first == UInt8(ascii: "!"), words.next() != nil,
        let at = words.next().flatMap(RequestParser.revision), previous.map({ at == $0 + 1 }) ?? true
      else {
        throw ProtocolError(.internal, "the events of the fleet entry at revision \(revision) are damaged")
      }
      if first == nil { first = at }
      previous = at
      start = end + 1
    }
    guard let first, previous == revision else {
      throw ProtocolError(
        .internal, "the events of the fleet entry at revision \(revision) do not end at its revision")
    }
    return first
  }
}
