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
    #expect(try parse(["--socket", "/tmp/x.sock"]).fleet == nil)
  }

  @Test func theFleetsDefaultsFollowTheList() throws {
    let options = try parse([
      "--list", "media", "--etcd", "http://a:2379,http://b:2379", "--host-name", "kiosk-3",
    ])
    let fleet = try #require(options.fleet)
    #expect(fleet.members == ["http://a:2379", "http://b:2379"])
    #expect(fleet.prefix == "/sectiond/media/")
    #expect(fleet.host == "kiosk-3")
    #expect(try parse(["--etcd", "http://a:2379"]).fleet?.prefix == "/sectiond/default/")
    #expect(try parse(["--etcd", "http://a:2379"]).fleet?.host.isEmpty == false)
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
      fromEnvironment.fleet?.credentials?.user == "u" && fromEnvironment.fleet?.credentials?.password == "p:w"
    )
    #expect(
      (try? parse(etcd, environment: ["SECTIOND_ETCD_USER": "u"])) == nil,
      "a user without a password is refused")
    #expect(try parse(etcd + ["--etcd-credentials", "/c"]).fleet?.credentialsFile == "/c")
    #expect(try parse(etcd).fleet?.credentialsFile == nil)
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
    #expect(systemd.fleet?.credentialsFile == directory + "/etcd")
    let read = try FleetOptions.credentials(in: directory + "/etcd")
    #expect(read.user == "fleet" && read.password == "se:cret")
  }
}
