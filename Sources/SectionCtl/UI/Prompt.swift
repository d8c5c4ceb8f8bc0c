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
    /// Asks y or n; the request is sent on y.
    case confirm(String)
  }

  var question: String
  var purpose: Purpose
  var text = ""
  /// Why Enter did not send it, shown until the next key.
  var note: String?

  /// The request line for what was typed, or a reason to keep asking.
  func request() -> Result<String, Refusal> {
    let text = text.drop { $0 == " " }
    switch purpose {
    case .confirm(let line): return .success(line)
    case .addSection(let index):
      let words = text.split(separator: " ", maxSplits: 1)
      guard words.count == 2 else { return .failure(Refusal("type an id, a space and a title")) }
      return .success("INSERT \(index) \(words[0]) \(words[1])")
    case .rename(let id), .addItem(let id, _), .editItem(let id, _):
      guard !text.isEmpty else { return .failure(Refusal("type some text, or Esc to cancel")) }
      switch purpose {
      case .rename: return .success("RENAME \(id) \(text)")
      case .addItem(_, let position):
        return .success("ITEM INSERT \(id) \(position.map(String.init) ?? "end") \(text)")
      default:
        guard case .editItem(_, let position) = purpose else { return .failure(Refusal("")) }
        return .success("ITEM SET \(id) \(position) \(text)")
      }
    }
  }

  struct Refusal: Error, Equatable {
    let message: String
    init(_ message: String) { self.message = message }
  }

  /// The question and the text with a cursor after it; when they do not fit, the end stays in view.
  func line(columns: Int, unicode: Bool) -> String {
    let hint = purposeIsConfirm ? "  (y/n)" : note.map { " [\($0)]" } ?? ""
    let line = " \(question)\(hint): \(text)" + (unicode ? "▏" : "_")
    var tail = Substring(line)
    while DisplayWidth.of(String(tail)) > columns - 1 && !tail.isEmpty { tail = tail.dropFirst() }
    return tail.count == line.count ? line : (unicode ? "…" : "~") + tail
  }

  private var purposeIsConfirm: Bool {
    if case .confirm = purpose { true } else { false }
  }
}
