import Testing

@testable import SectionClient
@testable import SectionCtl

@Suite struct HelpTextTests {
  @Test func generalHelpListsEveryCommand() {
    let text = HelpText.general()
    #expect(text.hasPrefix("Usage: sectionctl"))
    for command in Subcommand.allCases {
      #expect(text.contains("\n  \(command.rawValue) "), "\(command)")
    }
    #expect(text.contains("--socket PATH"))
    #expect(
      text.contains("-s, --socket PATH") && text.contains("-r, --readonly") && text.contains("-j, --json"))
    #expect(text.contains("Exit status"))
  }

  @Test(arguments: Subcommand.allCases)
  func everyCommandHasUsageAndExample(_ command: Subcommand) {
    let text = HelpText.command(command)
    #expect(text.hasPrefix("Usage: sectionctl \(command.rawValue)"))
    #expect(text.contains("Example:\n  sectionctl"))
    #expect(command.example.contains(command.rawValue))
  }
}
