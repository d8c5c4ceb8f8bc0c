import Foundation
import Testing

/// The options of the request bounds on the command line: the text bound applies to the config
/// at start, and a request bound that OPEN ALL could not fit is refused.
@Suite struct BoundsOptionsTests {
  @Test func aConfigWithMoreTextThanTheBoundIsRefused() throws {
    let directory = TemporaryDirectory()
    let config = directory.write("c.json", #"{"sections":[{"id":"abc","title":"Abcdef","items":["x"]}]}"#)
    let refused = try runCommand(
      Built.sectiond, ["--check-config", "--config", config, "--max-text-bytes", "9"])
    #expect(refused.status == 1)
    #expect(
      refused.standardError.contains(
        "\(config): the sections hold 10 bytes of ids, titles and items; at most 9 (sectiond --max-text-bytes)"
      ))
    let fits = try runCommand(
      Built.sectiond, ["--check-config", "--config", config, "--max-text-bytes", "10"])
    #expect(fits.status == 0)
  }

  @Test func theRequestBoundMustFitOpenAll() throws {
    let result = try runCommand(Built.sectiond, ["--max-sections", "500", "--max-request-changes", "500"])
    #expect(result.status == 2)
    #expect(result.standardError.contains("give at least 501"))
    let help = try runCommand(Built.sectiond, ["--help"]).standardOutput
    #expect(help.contains("--max-text-bytes N") && help.contains("--max-request-changes N"))
  }
}
