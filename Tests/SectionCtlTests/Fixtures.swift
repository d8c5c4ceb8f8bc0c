import Glibc
import Posix

@testable import SectionClient
@testable import SectionCtl

/// The daemon's built-in demo set, with the second section open, as replies would describe it.
enum Fixtures {
  static let sections = [
    ListedSection(index: 0, id: "first", isOpen: false, itemCount: 10, title: "First"),
    ListedSection(index: 1, id: "second", isOpen: true, itemCount: 2, title: "Second"),
    ListedSection(index: 2, id: "third", isOpen: false, itemCount: 1, title: "Third"),
  ]
  static let items = [
    ListedItem(sectionIndex: 1, position: 0, text: "one"),
    ListedItem(sectionIndex: 1, position: 1, text: "two words"),
  ]

  /// Widths as a UTF-8 terminal counts them (`wcwidth` under C.UTF-8), whatever locale the
  /// tests run under: sectionctl takes its locale from the environment, and CI may set none.
  static func useUTF8Locale() {
    _ = TerminalWidth.of("a")
    setlocale(LC_CTYPE, "C.UTF-8")
  }

  /// An environment with only `variables` set, for a user other than root.
  static func environment(_ variables: [String: String] = [:], userID: UInt32 = 1000, terminal: Bool = false)
    -> Environment
  {
    Environment(variable: { variables[$0] }, userID: userID, outputIsTerminal: terminal)
  }
}

extension Command {
  /// A runtime edit's request line, as the daemon reads it; nil for any other command.
  var editLine: String? {
    guard case .edit(let edit) = self else { return nil }
    return edit.line
  }
}
