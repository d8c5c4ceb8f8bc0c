import SectionShared

/// Who makes the changes of the requests being handled: what the history records beside each
/// change (`HISTORY`, the journal). One per connection, per bus caller, and one for the daemon
/// itself; the server hands the service the one a request came from (`SectionService.author`).
/// It never changes: the history keeps it for each change, so a client that names itself
/// (`CLIENT NAME`) becomes another author from then on, and its earlier changes keep the name
/// they were made under.
public final class Author {
  /// How a change came.
  public enum Via: String, Sendable {
    case socket
    case bus
    /// A config reload (RELOAD, SIGHUP, the D-Bus Reload) or the start.
    case reload
  }

  public let via: Via
  /// From SO_PEERCRED, or the bus daemon's credentials; nil when unknown (`-`).
  public let uid: UInt32?
  public let pid: Int32?
  /// The name given with `CLIENT NAME`, checked by `ClientName.isValid`; nil until then.
  public let name: [UInt8]?
  /// `<via> <uid> <pid> <name>`, rendered once: every change of this author repeats it.
  private var rendered: [UInt8] = []
  /// The name shown for it (`shownName`), once looked up; empty: none.
  private var shown: [UInt8]?
  /// Its index in the author table of the `History` that keeps its changes; -1: none.
  var slot = -1
  /// The host its changes came through, where the list is shared, shown after its name
  /// (`stamp(host:)`).
  private var host: [UInt8]?

  public init(via: Via, uid: UInt32?, pid: Int32?, name: String? = nil) {
    self.via = via
    self.uid = uid
    self.pid = pid
    self.name = name.map { Array($0.utf8) }
  }

  private init(via: Via, uid: UInt32?, pid: Int32?, name: [UInt8]?) {
    self.via = via
    self.uid = uid
    self.pid = pid
    self.name = name
  }

  /// The same client under the name `name` (`CLIENT NAME`).
  public func named(_ name: [UInt8]) -> Author {
    Author(via: via, uid: uid, pid: pid, name: name)
  }

  /// The author a saved line names (`saved`): its name is what the line says, never looked up
  /// again (the process may be gone, its pid reused).
  init(_ saved: SavedAuthor) {
    via = saved.via
    uid = saved.uid
    pid = saved.pid
    name = nil
    rendered = Array(saved.who)
    shown = Array(saved.shownName)
  }

  /// Whether it is the author read back from a history line that says `who`.
  func isRendered(as who: ArraySlice<UInt8>) -> Bool { rendered.elementsEqual(who) }

  /// The same client asking for a config reload: its changes came `via` reload.
  public func reloading() -> Author {
    Author(via: .reload, uid: uid, pid: pid, name: name)
  }

  /// `<via> <uid> <pid> <name>`; without a name, the process's (`processName`, its `comm`),
  /// made one word of the characters a name may hold; `-` when there is none.
  func who(_ processName: (Int32) -> String?) -> [UInt8] {
    if rendered.isEmpty {
      rendered.append(utf8: via.rawValue)
      rendered.append(" ")
      if let uid { rendered.appendDecimal(UInt64(uid)) } else { rendered.append("-") }
      rendered.append(" ")
      if let pid, pid >= 0 { rendered.appendDecimal(UInt64(pid)) } else { rendered.append("-") }
      rendered.append(" ")
      let shown = shownName(processName)
      if shown.isEmpty { rendered.append("-") } else { rendered.append(contentsOf: shown) }
    }
    return rendered
  }

  /// The name the history shows for it: the one given (`CLIENT NAME`), else its process's
  /// (`processName`, its `comm`) made one word of the characters a name may hold; empty when
  /// there is none. Looked up once and kept, as the history line shows it: the process may go,
  /// its pid be reused.
  public func shownName(_ processName: (Int32) -> String?) -> [UInt8] {
    if let shown { return shown }
    var found = name ?? pid.flatMap(processName).map { ClientName.asName(Array($0.utf8)) } ?? []
    if let host { found += [UInt8(ascii: "@")] + host }
    shown = found
    return found
  }

  /// Names the host its changes come through (`<name>@<host>` in the history), before it
  /// is first shown; an author read back from a history line keeps the name it has.
  func stamp(host: [UInt8]) {
    guard shown == nil, self.host == nil else { return }
    self.host = host
  }
}

/// Who made a saved change and when, as every saved line names them: `<time> <via> <uid> <pid>
/// <name>`, the journal's and a shared log entry's `by` lines, and a history line after its
/// revision. Read here only, whichever line it came in (a shared entry's text is another
/// host's: what does not read is no author), and written back byte for byte as read.
public struct SavedAuthor: Equatable {
  /// Milliseconds since the epoch.
  public let time: UInt64
  let via: Author.Via
  let uid: UInt32?
  let pid: Int32?
  /// The words as read, `<time>` to `<name>`: one copy of a line's bytes, the parts below
  /// being ranges of it (a host sharing the list reads one for each run of another host's
  /// changes).
  let text: [UInt8]
  /// Where `<via>` and `<name>` begin in `text`.
  private let whoStart: Int
  private let nameStart: Int

  /// `<via> <uid> <pid> <name>`, as `Author.who` renders it.
  var who: ArraySlice<UInt8> { text[whoStart...] }

  /// The name as the line shows it; empty for `-`.
  var shownName: ArraySlice<UInt8> {
    let name = text[nameStart...]
    return name.elementsEqual("-".utf8) ? [] : name
  }

  /// Reads the five words from `words`, words of `line`, leaving what follows them (a history
  /// line's event); nil when they are not there or the time does not read.
  init?(_ words: inout Words, of line: ArraySlice<UInt8>) {
    guard let timeWord = words.next(),
      let time = HistoryClock.milliseconds(of: String(decoding: timeWord, as: UTF8.self)),
      let via = words.next(), let uid = words.next(), let pid = words.next(), let name = words.next()
    else { return nil }
    self.time = time
    self.via = Author.Via(rawValue: String(decoding: via, as: UTF8.self)) ?? .socket
    self.uid = RequestParser.number(uid).flatMap { UInt32(exactly: $0) }
    self.pid = RequestParser.number(pid).flatMap { Int32(exactly: $0) }
    text = Array(line[timeWord.startIndex..<name.endIndex])
    whoStart = via.startIndex - timeWord.startIndex
    nameStart = name.startIndex - timeWord.startIndex
  }

  public static func == (left: SavedAuthor, right: SavedAuthor) -> Bool { left.text == right.text }
}
