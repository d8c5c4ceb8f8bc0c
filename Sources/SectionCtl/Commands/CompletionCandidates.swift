import Posix
import SectionClient

/// What the completion scripts ask sectionctl for (`sectionctl completion ids|titles|lists`),
/// one candidate a line, so that no script parses protocol text and nothing a server sends
/// reaches a shell as code (ids such as `$(touch /tmp/x)` ran through bash's
/// `compgen -W`). Only what a real id (`Section.idProblem`) or list name (`ListName`) can be is
/// printed; whatever else a server at a socket the user named answers is dropped.
enum CompletionCandidates: String, CaseIterable, Sendable {
  /// The sections' ids, one a line (bash).
  case ids
  /// `id:title` a line, the title escaped as every output is (zsh's `_describe`).
  case titles
  /// The names of the lists `sectionctl lists` finds, one a line; no daemon is asked.
  case lists

  /// The lines to print, asking the daemon `runner` names for its sections (ids, titles).
  func lines(_ runner: Runner) throws(ClientError) -> String {
    switch self {
    case .ids, .titles:
      let sections = try runner.connect().perform(.list).sections
      return CompletionCandidates.lines(sections, titles: self == .titles)
    case .lists:
      return Lists.find(in: Lists.directories(environment: runner.environment)).compactMap(\.name).map {
        "\($0.rawValue)\n"
      }.joined()
    }
  }

  /// The valid ids of `sections`, with their titles (`id:title`) when `titles`.
  static func lines(_ sections: [ListedSection], titles: Bool) -> String {
    var text = ""
    for section in sections where SectionID.problem(section.id) == nil {
      text += titles ? "\(section.id):\(VisibleText.escape(section.title))\n" : "\(section.id)\n"
    }
    return text
  }
}
