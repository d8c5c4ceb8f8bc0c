import SectionClient

/// How text output looks: colour only on a terminal that wants it, markers that the locale can show.
struct Style: Equatable, Sendable {
  var color: Bool
  var unicode: Bool

  static let plain = Style(color: false, unicode: false)

  init(color: Bool, unicode: Bool) {
    self.color = color
    self.unicode = unicode
  }

  /// Colour when standard output is a terminal, `NO_COLOR` is unset or empty and `TERM` is not `dumb`;
  /// ▾/▸ when the locale's character set is UTF-8.
  init(environment: Environment) {
    color =
      environment.outputIsTerminal && environment.nonEmpty("NO_COLOR") == nil
      && environment.variable("TERM") != "dumb"
    let locale =
      environment.nonEmpty("LC_ALL") ?? environment.nonEmpty("LC_CTYPE") ?? environment.nonEmpty("LANG") ?? ""
    let normalized = locale.lowercased().filter { $0 != "-" && $0 != "_" }
    unicode = normalized.hasSuffix("utf8") || normalized.contains("utf8@")
  }

  /// The header marker: ▾ open, ▸ closed; on other terminals - open, + closed (as in a tree view).
  func marker(open: Bool) -> String {
    switch (unicode, open) {
    case (true, true): "▾"
    case (true, false): "▸"
    case (false, true): "-"
    case (false, false): "+"
    }
  }

  func bold(_ text: String) -> String { paint(text, "1") }
  func dim(_ text: String) -> String { paint(text, "2") }
  func green(_ text: String) -> String { paint(text, "32") }

  private func paint(_ text: String, _ code: String) -> String {
    color ? "\u{1B}[\(code)m\(text)\u{1B}[0m" : text
  }
}
