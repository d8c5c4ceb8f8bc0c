/// One section of the list: its id, title and items. Its open/closed state lives in `SectionModel`.
public struct Section: Equatable, Sendable {
  /// Where a section comes from, which decides what a config reload may do to it.
  public enum Origin: String, Equatable, Sendable {
    /// From the config: a reload updates or removes it, unless a client edited it
    /// (`SectionModel.editedConfigIDs`).
    case config
    /// Inserted by a client: a reload never touches it.
    case client
  }

  /// Stable name used by clients and by the state file; never all digits, never `all`.
  public var id: String { storage.id }
  public internal(set) var title: String {
    get { storage.title }
    set { uniqueStorage().title = newValue }
  }
  public internal(set) var items: [String] {
    get { storage.items }
    // Yields the array in place, so that inserting an item does not copy the other items.
    _modify { yield &uniqueStorage().items }
  }
  /// The state to start in when no saved state knows this section.
  public var initiallyOpen: Bool { storage.initiallyOpen }
  public var origin: Origin { storage.origin }
  /// A hash of the id, so that finding a section by id compares one integer per section
  /// (comparing the ids' bytes cost 18% of the daemon's time with 1,000 sections). Kept beside
  /// the reference, so that a scan of the list does not visit each section's storage.
  let idHash: UInt64
  /// Everything else, behind one reference (copied on write): the list is an array of
  /// sections, and inserting or deleting at its top moves every entry below. With the fields
  /// inline an entry took 64 bytes and that move was 29% of an INSERT's time with 1,000
  /// sections; now it is 16 bytes.
  private var storage: Storage

  private final class Storage: @unchecked Sendable {
    // Sendable: never mutated while shared (`uniqueStorage` copies it first).
    let id: String
    var title: String
    var items: [String]
    let initiallyOpen: Bool
    let origin: Origin

    init(id: String, title: String, items: [String], initiallyOpen: Bool, origin: Origin) {
      self.id = id
      self.title = title
      self.items = items
      self.initiallyOpen = initiallyOpen
      self.origin = origin
    }
  }

  public init(
    id: String, title: String, items: [String], initiallyOpen: Bool = false, origin: Origin = .config
  ) {
    storage = Storage(id: id, title: title, items: items, initiallyOpen: initiallyOpen, origin: origin)
    idHash = Section.hash(id.utf8)
  }

  private mutating func uniqueStorage() -> Storage {
    if !isKnownUniquelyReferenced(&storage) {
      storage = Storage(
        id: storage.id, title: storage.title, items: storage.items, initiallyOpen: storage.initiallyOpen,
        origin: storage.origin)
    }
    return storage
  }

  /// Bytes of its id, title and items: what it adds to the list's text (`EditLimits.textBytes`).
  public var textBytes: Int {
    storage.items.reduce(storage.id.utf8.count + storage.title.utf8.count) { $0 + $1.utf8.count }
  }

  public static func == (lhs: Section, rhs: Section) -> Bool {
    lhs.storage === rhs.storage
      || (lhs.idHash == rhs.idHash && lhs.id == rhs.id && lhs.title == rhs.title && lhs.items == rhs.items
        && lhs.initiallyOpen == rhs.initiallyOpen && lhs.origin == rhs.origin)
  }

  /// FNV-1a of the id's bytes.
  static func hash(_ bytes: some Sequence<UInt8>) -> UInt64 {
    var hash: UInt64 = 0xcbf2_9ce4_8422_2325
    for byte in bytes { hash = (hash ^ UInt64(byte)) &* 0x100_0000_01b3 }
    return hash
  }

  /// The id a title gets when the config gives none: lower-cased, Latin letters with accents
  /// without them (`Ünïcode` gives `unicode`), every run of other characters than a-z and 0-9
  /// turned into one `-`, with `-` trimmed from both ends.
  public static func derivedID(fromTitle title: String) -> String {
    var id = ""
    var pendingDash = false
    for scalar in title.unicodeScalars {
      let letters: Substring
      if ("a"..."z").contains(scalar) || ("0"..."9").contains(scalar) || ("A"..."Z").contains(scalar) {
        letters = Substring(String(scalar).lowercased())
      } else if (0xC0..<0x180).contains(scalar.value), case let word = latinLetters[Int(scalar.value) - 0xC0],
        word != "-"
      {
        letters = word
      } else {
        pendingDash = true
        continue
      }
      if pendingDash && !id.isEmpty { id += "-" }
      pendingDash = false
      id += letters
    }
    return id
  }

  /// The ASCII letters of U+00C0 to U+017F (Latin-1 Supplement and Latin Extended-A) for
  /// derived ids: the letter without its accent (Ü u, ç c), ligatures and special letters
  /// spelt out (ß ss, æ ae, þ th), `-` for the two signs among them (× ÷). Generated from
  /// Unicode's canonical decompositions; other scripts have no ASCII spelling, and separate.
  private static let latinLetters: [Substring] = """
    a a a a a a ae c e e e e i i i i d n o o o o o - o u u u u y th ss a a a a a a ae c 
    e e e e i i i i d n o o o o o - o u u u u y th y a a a a a a c c c c c c c c d d d 
    d e e e e e e e e e e g g g g g g g g h h h h i i i i i i i i i i ij ij j j k k k l 
    l l l l l l l l l n n n n n n n ng ng o o o o o o oe oe r r r r r r s s s s s s s s 
    t t t t t t u u u u u u u u u u u u w w y y y z z z z z z s
    """.split(whereSeparator: { $0 == " " || $0 == "\n" })

  /// What is wrong with `id` as a section id, to follow "id" in a message; nil when nothing.
  /// Ids travel in space-separated protocol lines and comma-separated lists, so they are
  /// restricted to characters that can never split them.
  public static func idProblem(_ id: String) -> String? { SectionID.problem(id) }

  /// What is wrong with `text` as a title or item, to follow its name in a message; nil when
  /// nothing. Titles and items are single lines: they travel as the rest of a protocol line.
  ///
  /// Bidirectional embedding, override and isolate controls (U+202A-202E, U+2066-2069) are
  /// refused too: they reorder the text that follows them on screen, so an item
  /// `\u{202E}gnp.exe` shows as `exe.png` and an unterminated one flips the rest of the line
  /// a client prints after it ("Trojan Source", CVE-2021-42574; compilers warn on them now).
  /// `allowingBidi` accepts them, for state files and journals written before they were refused.
  public static func textProblem(_ text: String, allowingBidi: Bool = false) -> String? {
    if text.isEmpty { return "is empty" }
    // Most text is printable ASCII: one pass over the bytes settles it (a start reads tens of
    // megabytes of it).
    let utf8 = text.utf8
    let printable = utf8.withContiguousStorageIfAvailable { $0.allSatisfy { $0 >= 0x20 && $0 < 0x7F } }
    if printable ?? utf8.allSatisfy({ $0 >= 0x20 && $0 < 0x7F }) { return nil }
    guard
      let bad = text.unicodeScalars.first(where: {
        $0.value < 0x20 || $0.value == 0x7F || (0x80..<0xA0).contains($0.value) || $0 == "\u{2028}"
          || $0 == "\u{2029}" || (!allowingBidi && isBidiControl($0))
      })
    else { return nil }
    if isBidiControl(bad) {
      return
        "contains bidirectional control \(codePoint(bad)), which would reorder the text shown after it; remove it"
    }
    return
      "contains control character \(codePoint(bad)); titles and items are single lines of plain text"
  }

  private static func isBidiControl(_ scalar: Unicode.Scalar) -> Bool {
    (0x202A...0x202E).contains(scalar.value) || (0x2066...0x2069).contains(scalar.value)
  }

  private static func codePoint(_ scalar: Unicode.Scalar) -> String {
    "U+" + String(scalar.value, radix: 16, uppercase: true)
  }
}
