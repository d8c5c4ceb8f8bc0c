import Glibc
import Testing

@testable import SectionServer

/// `--etcd` and its options: what a fleet's host is started with, and the refusals that name
/// what to give instead.
@Suite struct FleetOptionsTests {
  private func parse(_ arguments: [String], environment: [String: String] = [:]) throws -> DaemonOptions {
    guard case .run(let options) = try DaemonOptions.parse(arguments, environment: { environment[$0] }) else {
      throw DaemonOptions.UsageError(description: "printed instead of running")
    }
    return options
  }

  private func refusal(_ arguments: [String]) -> String? {
    do {
      _ = try parse(arguments)
      return nil
    } catch {
      return "\(error)"
    }
  }

  @Test func withoutEtcdThereIsNoFleet() throws {
    #expect(try parse(["--socket", "/tmp/x.sock"]).etcd == nil)
  }

  @Test func theFleetsDefaultsFollowTheList() throws {
    let options = try parse([
      "--list", "media", "--etcd", "http://a:2379,http://b:2379", "--host-name", "kiosk-3",
    ])
    let fleet = try #require(options.etcd)
    #expect(fleet.members == ["http://a:2379", "http://b:2379"])
    #expect(fleet.prefix == "/sectiond/media/")
    #expect(fleet.host == "kiosk-3")
    #expect(try parse(["--etcd", "http://a:2379"]).etcd?.prefix == "/sectiond/default/")
    #expect(try parse(["--etcd", "http://a:2379"]).etcd?.host.isEmpty == false)
  }

  @Test func badFleetOptionsAreRefusedSayingWhatToGive() {
    #expect(refusal(["--etcd", "a:2379"])?.contains("http://HOST:PORT") == true)
    #expect(refusal(["--etcd", "https://a:2379"])?.contains("--etcd-cacert") == true)
    #expect(refusal(["--etcd-prefix", "/x/"])?.contains("need --etcd") == true)
    #expect(refusal(["--etcd", "http://a:1", "--etcd-prefix", "/no end"])?.contains("ending in /") == true)
    #expect(refusal(["--etcd", "http://a:1", "--host-name", "a@b"])?.contains("one word") == true)
    #expect(
      refusal(["--etcd", "https://a:1", "--etcd-cacert", "ca", "--etcd-cert", "c"])?.contains("go together")
        == true)
  }

  /// etcd's user and password never come from the command line: the environment, a file, or
  /// systemd's credential `etcd`.
  @Test func credentialsComeFromTheEnvironmentOrAFile() throws {
    let etcd = ["--etcd", "http://a:2379"]
    let fromEnvironment = try parse(
      etcd, environment: ["SECTIOND_ETCD_USER": "u", "SECTIOND_ETCD_PASSWORD": "p:w"])
    #expect(
      fromEnvironment.etcd?.credentials?.user == "u" && fromEnvironment.etcd?.credentials?.password == "p:w"
    )
    #expect(
      (try? parse(etcd, environment: ["SECTIOND_ETCD_USER": "u"])) == nil,
      "a user without a password is refused")
    #expect(try parse(etcd + ["--etcd-credentials", "/c"]).etcd?.credentialsFile == "/c")
    #expect(try parse(etcd).etcd?.credentialsFile == nil)
    let directory = "/tmp/sd-cred-\(getpid())"
    mkdir(directory, 0o700)
    defer {
      unlink(directory + "/etcd")
      rmdir(directory)
    }
    let fd = open(directory + "/etcd", O_CREAT | O_WRONLY, 0o600)
    _ = write(fd, "fleet:se:cret\nignored\n", 21)
    close(fd)
    let systemd = try parse(etcd, environment: ["CREDENTIALS_DIRECTORY": directory])
    #expect(systemd.etcd?.credentialsFile == directory + "/etcd")
    let read = try EtcdOptions.credentials(in: directory + "/etcd")
    #expect(read.user == "fleet" && read.password == "se:cret")
  }

  /// A password in a member's URL would be in ps, STATUS and every log line: refused, without
  /// the message repeating it.
  @Test func aPasswordInAMemberURLIsRefusedUnrepeated() throws {
    let refused = try #require(refusal(["--etcd", "http://a:2379,https://alpha:S3cret@b:2379"]))
    #expect(refused.contains("--etcd-credentials") && !refused.contains("S3cret"), "\(refused)")
    #expect(refusal(["--etcd", "http://user@b:2379"]) != nil)
    #expect(refusal(["--etcd", "http://b:2379/path@x"]) == nil, "an @ past the host is not a user")
    #expect(refusal(["--etcd", "http://b:2379\u{1B}[2J"]) != nil, "a control character")
  }

  /// As ssh refuses a private key others can read.
  @Test func aCredentialsFileOthersCanReadIsRefused() throws {
    let path = "/tmp/sd-cred-open-\(getpid())"
    let fd = open(path, O_CREAT | O_WRONLY, 0o600)
    _ = write(fd, "fleet:secret\n", 13)
    close(fd)
    defer { unlink(path) }
    for mode: mode_t in [0o644, 0o640, 0o604] {
      chmod(path, mode)
      #expect(throws: StartFailure.self) { try EtcdOptions.credentials(in: path) }
    }
    chmod(path, 0o400)
    #expect(try EtcdOptions.credentials(in: path).password == "secret")
  }
}
