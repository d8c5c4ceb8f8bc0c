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
public struct FleetEntry {
  public enum Body {
    /// The changes, and who made each (by revision, `<time> <via> <uid> <pid> <name>`).
    case changes([Change], authors: [UInt64: [UInt8]])
    /// The state after the group, as `SavedState.decode` reads it, and the group's events, so
    /// that every host's subscribers get the same as the host's that made it.
    case state(SavedState, events: [UInt8])
  }

  /// The revision the group committed: its last change's.
  public let revision: UInt64
  public let host: String
  public let commit: String
  public let body: Body

  static let magic = "sectiond-fleet 1 "

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

  /// The entry in `bytes`; throws what is wrong with it (another format, a damaged group).
  public static func decode(_ bytes: [UInt8]) throws(ProtocolError) -> FleetEntry {
    guard let newline = bytes.firstIndex(of: 0x0A), bytes.starts(with: magic.utf8) else {
      throw ProtocolError(.internal, "not a sectiond fleet entry")
    }
    var words = Words(bytes[magic.utf8.count..<newline])
    guard let revision = words.next().flatMap(RequestParser.number), revision > 0,
      let host = words.next(), let commit = words.next()
    else { throw ProtocolError(.internal, "a fleet entry's header is damaged") }
    let kind = words.next()
    let rest = Array(bytes[(newline + 1)...])
    let body: Body
    if let kind {
      guard kind.elementsEqual("state".utf8), let count = words.next().flatMap(RequestParser.number),
        count <= rest.count
      else {
        throw ProtocolError(.internal, "a fleet entry of an unknown kind")
      }
      do {
        body = .state(try SavedState.decode(rest[count...]), events: Array(rest[..<count]))
      } catch {
        throw ProtocolError(.internal, "the state of the fleet entry at revision \(revision): \(error)")
      }
    } else {
      let contents = Journal.decode(rest)
      guard contents.stop == nil, contents.groups.count == 1, contents.groups[0].revision == UInt64(revision)
      else {
        throw ProtocolError(
          .internal,
          "the fleet entry at revision \(revision) is damaged" + (contents.stop.map { ": \($0)" } ?? ""))
      }
      body = .changes(contents.groups[0].changes, authors: contents.authors)
    }
    return FleetEntry(
      revision: UInt64(revision), host: String(decoding: host, as: UTF8.self),
      commit: String(decoding: commit, as: UTF8.self), body: body)
  }
}
