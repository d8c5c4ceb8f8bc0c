import Foundation
import Glibc
import Testing

/// `sectiond --etcd` execs sectiond-fleet, which alone has the fleet's code (the etcd client,
/// SectionFleet): a daemon without --etcd maps none of it (its idle RSS stays what it was without the fleet).
@Suite struct FleetBinaryTests {
  /// sectiond with nothing beside it, in a directory of its own; `fleet`: what is put beside
  /// it as sectiond-fleet (its contents and mode), nothing when nil.
  private func lonelyDaemon(fleet: (contents: String, mode: mode_t)? = nil) throws -> TemporaryDirectory {
    let directory = TemporaryDirectory()
    try FileManager.default.copyItem(atPath: Built.sectiond, toPath: directory.file("sectiond"))
    if let fleet {
      _ = directory.write("sectiond-fleet", fleet.contents)
      #expect(chmod(directory.file("sectiond-fleet"), fleet.mode) == 0)
    }
    return directory
  }

  private func startFleetHost(in directory: TemporaryDirectory) throws -> CommandResult {
    try runCommand(
      "/usr/bin/timeout",
      [
        // KILL: the test process blocks signals, and a daemon execing in a loop inherits that.
        "-s", "KILL", "10", directory.file("sectiond"), "--etcd", "http://127.0.0.1:1", "--socket",
        directory.file("c.sock"),
        "--no-state",
      ])
  }

  @Test func withoutTheFleetBinaryEtcdIsRefusedNamingItAndTheFix() throws {
    for fleet in [nil, (contents: "#!/bin/sh\n", mode: mode_t(0o644))] {
      let directory = try lonelyDaemon(fleet: fleet)
      let result = try startFleetHost(in: directory)
      #expect(result.status == 1, "\(result)")
      #expect(result.standardError.contains("--etcd needs sectiond-fleet"), "\(result.standardError)")
      #expect(result.standardError.contains(directory.file("sectiond-fleet")), "\(result.standardError)")
      #expect(result.standardError.contains("libexec/sectiond/sectiond-fleet"), "\(result.standardError)")
      #expect(result.standardError.contains("install it"), "\(result.standardError)")
      #expect(!FileManager.default.fileExists(atPath: directory.file("c.sock")), "nothing was opened")
      // --check-config finds it missing as a start would.
      let check = try runCommand(
        directory.file("sectiond"), ["--check-config", "--etcd", "http://127.0.0.1:1"])
      #expect(check.status == 1 && check.standardError.contains("--etcd needs sectiond-fleet"), "\(check)")
    }
  }

  @Test func aFleetBinaryThatCannotRunIsNamedWithExecve() throws {
    // Executable, but not a program the kernel can run (no #! line, no ELF header): ENOEXEC.
    let directory = try lonelyDaemon(fleet: (contents: "not a program\n", mode: 0o755))
    try expectStartRefused(
      in: directory, saying: "execve(\(directory.file("sectiond-fleet"))): Exec format error")
  }

  @Test func aPlainSectiondInstalledAsTheFleetBinaryIsFoundOut() throws {
    // A copy of sectiond as sectiond-fleet would exec itself for ever; the second is refused.
    let directory = try lonelyDaemon()
    try FileManager.default.copyItem(atPath: Built.sectiond, toPath: directory.file("sectiond-fleet"))
    try expectStartRefused(
      in: directory, saying: "\(directory.file("sectiond-fleet")) is a sectiond without the fleet")
  }

  /// The fleet host in `directory` exits with status 1, its error containing `message`.
  private func expectStartRefused(in directory: TemporaryDirectory, saying message: String) throws {
    let result = try startFleetHost(in: directory)
    #expect(result.status == 1, "\(result)")
    #expect(result.standardError.contains(message), "\(result.standardError)")
  }

  /// SECTIOND_ETCD_ANSWER_LIMIT (the etcd client's limit on one answer, lowered by the fleet's
  /// tests) is input: anything but a number of bytes in its range stops the start, naming the
  /// variable and the range, and the value is not echoed.
  @Test func anAnswerLimitOutOfItsRangeIsRefusedAtStart() throws {
    let directory = TemporaryDirectory()
    for value in ["12x", "1024", "67108865", "99999999999999999999999", "\u{1B}]0;x\u{7}"] {
      let result = try runCommand(
        "/usr/bin/timeout",
        [
          "-s", "KILL", "10", Built.sectiond, "--etcd", "http://127.0.0.1:1", "--socket",
          directory.file("c.sock"),
          "--no-state",
        ], environment: ["SECTIOND_ETCD_ANSWER_LIMIT": value])
      #expect(result.status == 1, "\(value): \(result)")
      #expect(
        result.standardError.contains(
          "SECTIOND_ETCD_ANSWER_LIMIT is not a number of bytes from 4194304 to 67108864"),
        "\(value): \(result.standardError)")
      #expect(!result.standardError.contains("\u{1B}"), "\(result.standardError)")
    }
  }

  @Test func withItTheSameProcessServesAsAFleetHost() throws {
    // No etcd answers: the host serves reads from its own state while it tries to join.
    let daemon = try TestDaemon(arguments: ["--etcd", "http://127.0.0.1:1", "--host-name", "h1"])
    let pid = try #require(daemon.process?.processIdentifier)
    let status = try daemon.connect().request("STATUS").dropLast().map {
      $0.split(separator: " ", maxSplits: 2)
    }
    let fields = Dictionary(status.map { (String($0[1]), $0.count > 2 ? String($0[2]) : "") }) { a, _ in a }
    #expect(fields["pid"] == String(pid), "the pid sectiond was started with: \(status)")
    #expect(fields["fleet-host"] == "h1", "\(status)")
    #expect(fields["fleet-state"] == "joining", "\(status)")
    let executable = try FileManager.default.destinationOfSymbolicLink(atPath: "/proc/\(pid)/exe")
    #expect(executable == Built.directory + "/sectiond-fleet")
  }

  /// The module names of the fleet's code, as Swift mangles them into every symbol of theirs.
  private static let fleetModules = ["4Etcd", "12SectionFleet"]

  private func fleetSymbols(in binary: String) throws -> Int {
    let nm = "/usr/bin/nm"
    guard FileManager.default.isExecutableFile(atPath: nm) else {
      throw TestFailure("\(nm) is missing: install binutils (scripts/deps.sh --test)")
    }
    let result = try runCommand(nm, [binary])
    #expect(result.status == 0, "\(result.standardError)")
    return result.standardOutput.split(separator: "\n").filter { line in
      Self.fleetModules.contains { line.contains("$s\($0)") }
    }.count
  }

  @Test func sectiondHasNoFleetCode() throws {
    #expect(try fleetSymbols(in: Built.sectiond) == 0)
    // The probe finds them where they are.
    #expect(try fleetSymbols(in: Built.directory + "/sectiond-fleet") > 100)
  }
}
