import Foundation
import Glibc

/// One finished run of the built `sectionctl`: exit status and what it printed.
struct SectionctlRun {
  let status: Int32
  let stdout: String
  let stderr: String

  /// Standard output as one JSON document; fails the test with the output when it is not JSON.
  func json() throws -> [String: Any] {
    guard let object = try JSONSerialization.jsonObject(with: Data(stdout.utf8)) as? [String: Any] else {
      throw TestFailure("sectionctl did not print a JSON object: \(stdout)")
    }
    return object
  }

  /// Standard output split into lines, without the final empty one.
  var lines: [String] {
    stdout.split(separator: "\n", omittingEmptySubsequences: false).dropLast().map(String.init)
  }

  /// Runs `sectionctl arguments` to completion, failing after `timeout` seconds rather than hanging the suite.
  static func run(
    _ arguments: [String], environment: [String: String] = [:], standardInput: String? = nil,
    timeout: Double = 20
  ) throws -> SectionctlRun {
    let process = SectionctlProcess(arguments, environment: environment, standardInput: standardInput)
    try process.start()
    guard process.waitForExit(timeout: timeout) else {
      process.interrupt(SIGKILL)
      throw TestFailure(
        "sectionctl \(arguments) did not finish within \(timeout) s; printed \(process.stdout)")
    }
    return SectionctlRun(status: process.status, stdout: process.stdout, stderr: process.stderr)
  }
}

/// A running `sectionctl` whose output goes to files, so a test can look at it while it runs (`watch`).
final class SectionctlProcess {
  private let process = Process()
  private let directory = TemporaryDirectory()

  /// What standard input holds; nil: /dev/null.
  private let standardInput: String?

  init(_ arguments: [String], environment: [String: String] = [:], standardInput: String? = nil) {
    self.standardInput = standardInput
    process.executableURL = URL(fileURLWithPath: Built.sectionctl)
    process.arguments = arguments
    var env = ProcessInfo.processInfo.environment
    for name in ["SECTIOND_SOCKET", "NO_COLOR", "LC_ALL", "LC_CTYPE"] { env.removeValue(forKey: name) }
    env["LANG"] = "C.UTF-8"
    for (key, value) in environment { env[key] = value }
    process.environment = env
  }

  func start() throws {
    for name in ["out", "err"]
    where !FileManager.default.createFile(atPath: directory.file(name), contents: nil) {
      throw TestFailure("cannot create \(directory.file(name))")
    }
    process.standardOutput = FileHandle(forWritingAtPath: directory.file("out"))
    process.standardError = FileHandle(forWritingAtPath: directory.file("err"))
    if let standardInput {
      _ = directory.write("in", standardInput)
      process.standardInput = FileHandle(forReadingAtPath: directory.file("in"))
    } else {
      process.standardInput = FileHandle.nullDevice
    }
    try process.run()
  }

  var stdout: String { read("out") }
  var stderr: String { read("err") }
  var status: Int32 { process.terminationStatus }
  var isRunning: Bool { process.isRunning }

  /// The complete lines printed so far.
  var lines: [String] {
    stdout.split(separator: "\n", omittingEmptySubsequences: false).dropLast().map(String.init)
  }

  /// Waits until at least `count` lines are out; returns them, or throws with what there is after `timeout` s.
  @discardableResult
  func waitForLines(_ count: Int, timeout: Double = 10) throws -> [String] {
    try waitFor("\(count) lines", timeout: timeout) { $0.lines.count >= count }
    return lines
  }

  /// Waits until `condition` holds for this process, polling.
  func waitFor(_ what: String, timeout: Double = 10, _ condition: (SectionctlProcess) -> Bool) throws {
    let deadline = Date().addingTimeInterval(timeout)
    while !condition(self) {
      if Date() > deadline {
        throw TestFailure("sectionctl: no \(what) within \(timeout) s; stdout: \(stdout) stderr: \(stderr)")
      }
      usleep(20_000)
    }
  }

  /// True if the process exited within `timeout` seconds.
  func waitForExit(timeout: Double = 10) -> Bool {
    let deadline = Date().addingTimeInterval(timeout)
    while process.isRunning {
      if Date() > deadline { return false }
      usleep(10_000)
    }
    process.waitUntilExit()
    return true
  }

  func interrupt(_ signal: Int32 = SIGINT) {
    if process.isRunning { kill(process.processIdentifier, signal) }
  }

  private func read(_ name: String) -> String {
    (try? String(contentsOfFile: directory.file(name), encoding: .utf8)) ?? ""
  }

  deinit {
    guard process.processIdentifier != 0 else { return }
    interrupt(SIGKILL)
    process.waitUntilExit()
  }
}
