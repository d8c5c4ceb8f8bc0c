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

/// Makes every kind of change to `model` (abc() in exclusive mode, or anything with at least
/// three sections of which the second has an item): sections inserted, opened, moved, renamed,
/// deleted, items inserted, moved, set and deleted, and a mode switch. Returns the changes.
func editEveryWay(_ model: inout SectionModel) throws -> [Change] {
  var changes: [Change] = []
  let limits = EditLimits()
  model.open(1, changes: &changes)
  try model.insert(id: "n", title: "Latest  news", at: 0, limits: limits, changes: &changes)
  model.open(0, changes: &changes)
  try model.move(0, to: 3, changes: &changes)
  try model.rename(0, to: "Aye aye", limits: EditLimits(), changes: &changes)
  try model.editItems(3, .insert(at: 0, text: "hello world"), limits: limits, changes: &changes)
  try model.editItems(3, .insert(at: 1, text: "ö x"), limits: limits, changes: &changes)
  try model.editItems(3, .move(from: 1, to: 0), limits: limits, changes: &changes)
  try model.editItems(3, .set(at: 0, text: "set"), limits: limits, changes: &changes)
  try model.editItems(3, .delete(at: 1), limits: limits, changes: &changes)
  model.delete(1, changes: &changes)
  model.setMode(model.mode == .multi ? .exclusive : .multi, changes: &changes)
  return changes
}
