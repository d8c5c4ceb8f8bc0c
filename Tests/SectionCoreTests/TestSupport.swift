@testable import SectionCore

/// The bytes of `text` as the slice the parser and the service take.
func bytes(_ text: String) -> ArraySlice<UInt8> { ArraySlice(Array(text.utf8)) }

/// A config built from (id, title, items, open) tuples.
func config(_ mode: Mode = .multi, _ sections: [(String, [String], Bool)]) -> Config {
  Config(
    mode: mode,
    sections: sections.map { id, items, open in
      Section(id: id, title: id.prefix(1).uppercased() + id.dropFirst(), items: items, initiallyOpen: open)
    })
}

/// Three sections a, b, c with 2, 1 and 0 items, all closed.
func abc(_ mode: Mode = .multi, open: Set<String> = []) -> Config {
  config(
    mode,
    [
      ("a", ["a1", "a2"], open.contains("a")), ("b", ["b1"], open.contains("b")),
      ("c", [], open.contains("c")),
    ])
}

extension SectionModel {
  /// Applies a change and returns what it reported.
  mutating func apply(_ body: (inout SectionModel, inout [Change]) -> Void) -> [Change] {
    var changes: [Change] = []
    body(&self, &changes)
    return changes
  }
}

/// The message `body` is refused with, or nil when it succeeds: for configs and state files.
func refusal(_ body: () throws(ConfigError) -> Void) -> String? {
  do {
    try body()
    return nil
  } catch {
    return error.description
  }
}
