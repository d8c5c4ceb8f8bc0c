import Posix
import Testing

@testable import SectionClient
@testable import SectionCtl

/// What sectionctl makes of `ERR DENIED`: the level missing and how an administrator grants it;
/// and the ui's keys at each level.
@Suite struct AccessLevelMessageTests {
  @Test func aDenialNamesTheLevelMissingAndTheRuleThatGrantsIt() throws {
    let error = ClientError.daemon(
      code: "DENIED",
      message:
        "edit operate DELETE needs the edit level and this connection has operate; nothing was changed; sectiond's access rules grant levels (sectiond(8), ACCESS)"
    )
    let denial = try #require(error.denial)
    #expect(
      denial.needs == .edit && denial.has == .operate
        && denial.what == "DELETE needs the edit level and this connection has operate")
    let user = ProcessInfo.userName(of: ProcessInfo.userID) ?? String(ProcessInfo.userID)
    #expect(error.diagnostic.contains("This connection may operate, not edit"), "\(error.diagnostic)")
    #expect(error.diagnostic.contains("\"user \(user) edit\""), "\(error.diagnostic)")
    #expect(
      error.diagnostic.contains("/etc/sectiond/access.conf")
        && error.diagnostic.hasSuffix("sectionctl reload"))
  }

  /// A DENIED whose words are not two levels is shown as the daemon sent it.
  @Test func aMalformedDenialIsShownAsSent() {
    let error = ClientError.daemon(code: "DENIED", message: "root everything DELETE")
    #expect(error.denial == nil)
    #expect(error.diagnostic == "root everything DELETE")
  }

  @Test func theKeyListOffersOnlyWhatTheLevelMay() {
    let all = ScreenModel.help(unicode: false)
    let operate = ScreenModel.help(unicode: false, level: .operate)
    let read = ScreenModel.help(unicode: false, level: .read)
    #expect(all == ScreenModel.help(unicode: false, level: .edit))
    #expect(operate.contains { $0.contains("open or close the cursor's section") })
    #expect(!operate.contains { $0.contains("delete the section") || $0.contains("switch mode") })
    #expect(!read.contains { $0.contains("open or close the cursor's section") })
    #expect(read.contains { $0.contains("move the cursor") })
    #expect(
      UIAction.toggle.level == .operate && UIAction.delete.level == .edit && UIAction.first.level == nil)
  }
}
