/// The commands of protocol 1. What each takes, answers and needs is its row of the grammar
/// (`Verb.row`, Grammar.swift): the daemon's parser and HELP, the client's requests and
/// sectionctl's help and completions all read it there.
public enum Verb: CaseIterable, Sendable {
  case ping, version, list, items, view, open, close, toggle, mode, subscribe, unsubscribe, help, quit, reload
  case status, history, client
  case insert, delete, move, rename, item, batch, end

  /// The verb `word` names, in any case. Runs for every request: the word's length and first
  /// letter pick the one verb it can be, which is then compared in place (a walk through the
  /// table of all of them cost a TOGGLE 184 instructions, callgrind).
  @inlinable public init?(_ word: ArraySlice<UInt8>) {
    guard let first = word.first, let verb = Verb.candidate(length: word.count, first: first | 0x20, word),
      Verb.equals(word, verb.spelling)
    else { return nil }
    self = verb
  }

  /// `asciiCaseInsensitiveEquals` for an upper-case name of letters only: clearing bit 5 of a
  /// byte upper-cases a letter, and only a letter's two cases give the same upper-case one.
  /// A third of its cost (callgrind).
  @inlinable static func equals(_ word: ArraySlice<UInt8>, _ name: StaticString) -> Bool {
    guard word.count == name.utf8CodeUnitCount else { return false }
    let name = name.utf8Start
    return word.withUnsafeBufferPointer { word in
      for index in word.indices where word[index] & 0xDF != name[index] { return false }
      return true
    }
  }

  /// The only verb a word of `length` bytes starting with `first` (lower-cased) can be; the
  /// two pairs alike in both (MODE and MOVE, RELOAD and RENAME) differ in their third byte.
  @inlinable static func candidate(length: Int, first: UInt8, _ word: ArraySlice<UInt8>) -> Verb? {
    switch (length, first) {
    case (3, UInt8(ascii: "e")): .end
    case (4, UInt8(ascii: "h")): .help
    case (4, UInt8(ascii: "i")): .item
    case (4, UInt8(ascii: "l")): .list
    case (4, UInt8(ascii: "m")): word[word.startIndex + 2] | 0x20 == UInt8(ascii: "d") ? .mode : .move
    case (4, UInt8(ascii: "o")): .open
    case (4, UInt8(ascii: "p")): .ping
    case (4, UInt8(ascii: "q")): .quit
    case (4, UInt8(ascii: "v")): .view
    case (5, UInt8(ascii: "b")): .batch
    case (5, UInt8(ascii: "c")): .close
    case (5, UInt8(ascii: "i")): .items
    case (6, UInt8(ascii: "d")): .delete
    case (6, UInt8(ascii: "c")): .client
    case (6, UInt8(ascii: "i")): .insert
    case (6, UInt8(ascii: "r")): word[word.startIndex + 2] | 0x20 == UInt8(ascii: "l") ? .reload : .rename
    case (6, UInt8(ascii: "s")): .status
    case (6, UInt8(ascii: "t")): .toggle
    case (7, UInt8(ascii: "h")): .history
    case (7, UInt8(ascii: "v")): .version
    case (9, UInt8(ascii: "s")): .subscribe
    case (11, UInt8(ascii: "u")): .unsubscribe
    default: nil
    }
  }

  /// `spelling` as a string.
  public var name: String { spelling.description }

  /// The verb as the protocol spells it, upper case.
  @inlinable public var spelling: StaticString {
    switch self {
    case .ping: "PING"
    case .version: "VERSION"
    case .list: "LIST"
    case .items: "ITEMS"
    case .view: "VIEW"
    case .open: "OPEN"
    case .close: "CLOSE"
    case .toggle: "TOGGLE"
    case .mode: "MODE"
    case .subscribe: "SUBSCRIBE"
    case .unsubscribe: "UNSUBSCRIBE"
    case .help: "HELP"
    case .quit: "QUIT"
    case .reload: "RELOAD"
    case .status: "STATUS"
    case .history: "HISTORY"
    case .client: "CLIENT"
    case .insert: "INSERT"
    case .delete: "DELETE"
    case .move: "MOVE"
    case .rename: "RENAME"
    case .item: "ITEM"
    case .batch: "BATCH"
    case .end: "END"
    }
  }
}
