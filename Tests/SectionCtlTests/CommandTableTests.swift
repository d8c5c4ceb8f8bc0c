import Testing

@testable import SectionClient
@testable import SectionCtl

/// The command table (`Subcommand`, `Subcommand.arguments`, `CommandOption`) against what is made
/// from it: every command and every option is in the help, the parser, the shell's Tab and the
/// bash and zsh scripts (`sectionctl log` was once missing from both scripts).
@Suite struct CommandTableTests {
  /// A value each option's parser takes.
  private func sample(_ value: CommandOption.Value) -> String {
    switch value.noun {
    case "socket": "/tmp/none.sock"
    case "list": "media"
    case "time": "today"
    case "name": "backup"
    default: "2"
    }
  }

  /// The usage message for `arguments`, or nil when they parse.
  private func usageError(_ arguments: [String]) -> String? {
    do {
      _ = try ArgumentParser.parse(arguments)
      return nil
    } catch {
      guard case .usage(let message) = error else { return "not a usage error: \(error)" }
      return message
    }
  }

  /// The bash script's line that begins (after its indentation) with `start`.
  private func bashLine(_ start: String) -> String? {
    Completion.bash.split(separator: "\n").map { $0.drop { $0 == " " } }.first { $0.hasPrefix(start) }.map(
      String.init)
  }

  @Test(arguments: Subcommand.allCases)
  func everyCommandIsInEveryPart(_ command: Subcommand) throws {
    let name = command.rawValue
    #expect(HelpText.general().contains("\n  \(name) "), "--help")
    #expect(HelpText.command(command).hasPrefix("Usage: sectionctl \(name)"), "\(name) --help")
    #expect(try ArgumentParser.parse([name, "--help"]).command == .help(command), "the parser")
    #expect(ShellCompletion.candidates(for: name, after: "") { [] }.contains(name), "the shell's Tab")
    let words = try #require(bashLine("local commands=")).dropFirst(16).dropLast().split(separator: " ")
    #expect(words.first == "list" && words.last == "completion")
    #expect(words.contains(Substring(name)), "bash")
    let described = "\(name):\(command.summary)".split(separator: "'", omittingEmptySubsequences: false)
    #expect(Completion.zsh.contains("\n    '\(described.joined(separator: #"'\''"#))'\n"), "zsh")
  }

  @Test(arguments: CommandOption.allCases)
  func everyOptionIsInEveryPart(_ option: CommandOption) throws {
    let value = option.value.map { [sample($0)] } ?? []
    for spelling in option.spellings {
      #expect(CommandOption.named(spelling) == option, "one option for \(spelling)")
      let zshSpec =
        option.value == nil ? "\(spelling)[" : "\(spelling)\(spelling.hasPrefix("--") ? "=" : "+")["
      #expect(Completion.zsh.contains(zshSpec), "zsh: \(spelling)")
      guard let scope = option.scope else {
        let label =
          option.spellings.joined(separator: ", ") + (option.value.map { " " + $0.placeholder } ?? "")
        #expect(HelpText.general().contains(label), "--help: \(label)")
        let global = try #require(bashLine("local options=")).dropFirst(15).dropLast().split(separator: " ")
        #expect(global.contains(Substring(spelling)), "bash: \(spelling)")
        let error = usageError(["status", spelling] + value)
        #expect(error == nil || !error!.contains("option"), "the parser: \(spelling): \(error ?? "")")
        continue
      }
      for path in scope {
        let command = path.command
        #expect(HelpText.command(command).contains(spelling), "\(command.rawValue) --help: \(spelling)")
        #expect(
          Completion.bash.split(separator: "\n").contains {
            $0.contains("options+=") && $0.contains(" \(command.rawValue)") && $0.contains(" \(spelling)")
          }, "bash: \(command) \(spelling)")
        // (--force is --fresh's companion.)
        let words =
          [command.rawValue] + (path.action.map { [$0] } ?? []) + (option == .force ? ["--fresh"] : []) + [
            spelling
          ] + value
        let error = usageError(words) ?? ""
        #expect(!error.contains("option") && !error.contains("works only"), "the parser: \(words): \(error)")
      }
      // Anywhere else, the parser says where it works.
      let elsewhere = try #require(Subcommand.allCases.first { !option.applies(to: $0) })
      #expect(
        usageError([elsewhere.rawValue, spelling] + value)?.contains("\(option.label) works only with")
          == true,
        "\(spelling) with \(elsewhere)")
    }
  }

  @Test func unknownOptionsAreRefused() {
    for spelling in ["--jsno", "-x", "--all-sections", "--line"] {
      #expect(CommandOption.named(spelling) == nil)
      #expect(usageError(["list", spelling]) == "unknown option '\(spelling)'")
    }
  }

  /// Where a command takes a section, every part offers the daemon's ids; where it takes one of
  /// a few words, those words.
  @Test(arguments: Subcommand.allCases)
  func argumentsAreCompletedAlike(_ command: Subcommand) throws {
    let name = command.rawValue
    let ids = try #require(bashLine("::0"))  // the first branch: commands
    #expect(ids.contains("help:*:0"))
    let bashIds = try #require(
      Completion.bash.split(separator: "\n").first {
        $0.contains("_sectionctl_candidates ids") && $0.contains("open:")
      })
    let zshBranch =
      Completion.zsh.split(separator: "\n").first { $0.hasPrefix("    \(name))") }.map(String.init) ?? ""
    let paths: [(action: String?, arguments: [ArgumentKind])] =
      command.actions.isEmpty ? [(nil, command.arguments)] : command.actions.map { ($0.name, $0.arguments) }
    for (action, arguments) in paths {
      for (index, kind) in arguments.enumerated() {
        let before = (action.map { [$0] } ?? []) + Array(repeating: "x", count: index)
        let line = ([name] + before).joined(separator: " ") + " "
        let offered = ShellCompletion.candidates(for: "", after: line) { ["net"] }
        switch kind {
        case .section, .sections:
          #expect(offered == ["net"], "Tab after '\(line)'")
          let count = before.count
          let pattern = kind.repeats ? "\(name):*" : "\(name):\(action ?? "*"):\(count)"
          #expect(bashIds.contains(" \(pattern) ") || bashIds.contains(" \(pattern))"), "bash: \(pattern)")
          if action == nil { #expect(zshBranch.contains("section:_sectionctl_ids"), "zsh: \(name)") }
        case .choice(_, let words):
          #expect(offered == words, "Tab after '\(line)'")
          #expect(
            Completion.bash.contains("compgen -W \"\(words.joined(separator: " "))\""), "bash: \(words)")
          #expect(Completion.zsh.contains("(\(words.joined(separator: " ")))"), "zsh: \(words)")
        case .command:
          #expect(offered == Subcommand.allCases.map(\.rawValue), "Tab after '\(line)'")
        case .value, .values, .text:
          #expect(offered == [], "Tab after '\(line)'")
        }
      }
    }
    if !command.actions.isEmpty {
      let names = command.actions.map(\.name)
      #expect(ShellCompletion.candidates(for: "", after: name + " ") { [] } == names)
      for action in names {
        #expect(HelpText.command(command).contains("\(name) \(action) "), "help: \(action)")
      }
    }
  }

  @Test func freeTextBeginsWhereTheTableSays() throws {
    // After the text has begun, an option is the text's: add ID TITLE..., item set REF POSITION TEXT...
    #expect(
      try ArgumentParser.parse(["add", "news", "A", "--json"]).command.editLine == "INSERT end news A --json")
    #expect(try ArgumentParser.parse(["add", "news", "--json", "A"]).json)
    #expect(
      try ArgumentParser.parse(["item", "set", "news", "0", "A", "-j"]).command.editLine
        == "ITEM SET news 0 A -j")
    #expect(Subcommand.item.textStart(after: ["set"]) == 3)
    #expect(Subcommand.item.textStart(after: ["rm"]) == nil)
    #expect(Subcommand.rename.textStart(after: []) == 1)
  }
}
