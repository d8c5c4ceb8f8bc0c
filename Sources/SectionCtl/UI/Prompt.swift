import SectionClient

/// The line at the bottom of `sectionctl ui` that asks for a runtime edit's text, or for a
/// yes before a delete: what it asks, what has been typed, and the request it becomes.
struct Prompt: Equatable, Sendable {
  enum Purpose: Equatable, Sendable {
    /// INSERT at this index; the text is `ID TITLE...`.
    case addSection(at: Int)
    case rename(id: String)
    /// ITEM INSERT into the section at the position (`end` when nil).
    case addItem(id: String, at: Int?)
    case editItem(id: String, position: Int)
    /// DELETE the section, after a y.
    case deleteSection(id: String)
    /// ITEM DELETE the item, after a y.
    case deleteItem(id: String, position: Int)
  }

  var question: String
  var purpose: Purpose
  var text: String {
    didSet { cursor = min(cursor, text.count) }
  }
  /// Where the next character goes, in characters from the start of `text`.
  var cursor: Int
  /// Why Enter did not send it, shown until the next key.
  var note: String?

  /// Asks `question`, with `text` typed already and the cursor after it.
  init(question: String, purpose: Purpose, text: String = "") {
    self.question = question
    self.purpose = purpose
    self.text = text
    cursor = text.count
  }

  /// Edits the text as `key` asks, with the keys of a shell's line (readline's, in libedit's
  /// emacs mode): Left/Right, Home/End and Ctrl-B/F/A/E move; Backspace, Delete and Ctrl-D
  /// delete a character; Ctrl-U deletes to the start, Ctrl-K to the end, Ctrl-W the word
  /// before the cursor. False for a key that is not an edit.
  mutating func edit(_ key: Key) -> Bool {
    var characters = Array(text)
    switch key {
    case .character(let character):
      characters.insert(character, at: cursor)
      cursor += 1
    case .left, .control("B"): cursor = max(0, cursor - 1)
    case .right, .control("F"): cursor = min(characters.count, cursor + 1)
    case .home, .control("A"): cursor = 0
    case .end, .control("E"): cursor = characters.count
    case .backspace:
      guard cursor > 0 else { return true }
      characters.remove(at: cursor - 1)
      cursor -= 1
    case .delete, .control("D"):
      guard cursor < characters.count else { return true }
      characters.remove(at: cursor)
    case .control("U"):
      characters.removeSubrange(0..<cursor)
      cursor = 0
    case .control("K"): characters.removeSubrange(cursor...)
    case .control("W"):
      var start = cursor
      while start > 0, characters[start - 1] == " " { start -= 1 }
      while start > 0, characters[start - 1] != " " { start -= 1 }
      characters.removeSubrange(start..<cursor)
      cursor = start
    default: return false
    }
    text = String(characters)
    return true
  }

  /// Whether it asks y or n rather than for a text.
  var isConfirmation: Bool {
    switch purpose {
    case .deleteSection, .deleteItem: true
    default: false
    }
  }

  /// The request for what was typed, or a reason to keep asking.
  func request() -> Result<Request<UInt64>, Refusal> {
    let text = String(text.drop { $0 == " " })
    switch purpose {
    case .deleteSection(let id): return .success(.delete(id))
    case .deleteItem(let id, let position): return .success(.deleteItem(at: position, in: id))
    case .addSection(let index):
      let words = text.split(separator: " ", maxSplits: 1)
      guard words.count == 2 else { return .failure(Refusal("type an id, a space and a title")) }
      return .success(.insert(id: String(words[0]), title: String(words[1]), at: index))
    case .rename(let id), .addItem(let id, _), .editItem(let id, _):
      guard !text.isEmpty else { return .failure(Refusal("type some text, or Esc to cancel")) }
      switch purpose {
      case .rename: return .success(.rename(id, to: text))
      case .addItem(_, let position): return .success(.insertItem(text, in: id, at: position))
      default:
        guard case .editItem(_, let position) = purpose else { return .failure(Refusal("")) }
        return .success(.setItem(at: position, to: text, in: id))
      }
    }
  }

  struct Refusal: Error, Equatable {
    let message: String
    init(_ message: String) { self.message = message }
  }

  /// The question and the text with the cursor in it; when they do not fit, what comes
  /// after the cursor goes first, then what is furthest before it: the cursor stays in view.
  func line(columns: Int, unicode: Bool) -> String {
    let hint = isConfirmation ? "  (y/n)" : note.map { " [\($0)]" } ?? ""
    let characters = Array(text)
    let head = " \(question)\(hint): " + String(characters[..<cursor]) + (unicode ? "▏" : "_")
    var after = String(characters[cursor...])
    while !after.isEmpty && DisplayWidth.of(head + after) > columns - 1 { after.removeLast() }
    var tail = Substring(head)
    while DisplayWidth.of(String(tail)) > columns - 1 && !tail.isEmpty { tail = tail.dropFirst() }
    return (tail.count == head.count ? head : (unicode ? "…" : "~") + tail) + after
  }
}
