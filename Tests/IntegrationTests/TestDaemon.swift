import Foundation
import Glibc
import Posix

/// Where the built executables are: beside the test bundle, whatever the scratch path.
enum Built {
  static let directory: String = {
    let executable = (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? ""
    return (executable as NSString).deletingLastPathComponent
  }()
  static var sectiond: String { directory + "/sectiond" }
  static var sectionctl: String { directory + "/sectionctl" }
}

/// A private temporary directory with a short path (sun_path holds 108 bytes), removed at the end.
final class TemporaryDirectory {
  let path: String

  init() {
    var template = Array("/tmp/sd.XXXXXX".utf8CString)
    path = template.withUnsafeMutableBufferPointer { String(cString: mkdtemp($0.baseAddress!)!) }
  }

  func file(_ name: String) -> String { path + "/" + name }

  func write(_ name: String, _ contents: String) -> String {
    let target = file(name)
    _ = FileManager.default.createFile(atPath: target, contents: Data(contents.utf8))
    return target
  }

  deinit { try? FileManager.default.removeItem(atPath: path) }
}

struct TestFailure: Error, CustomStringConvertible {
  let description: String
  init(_ description: String) { self.description = description }
}

/// A real `sectiond` process on a socket in its own temporary directory.
final class TestDaemon {
  let directory: TemporaryDirectory
  let socketPath: String
  let statePath: String
  let arguments: [String]
  let environment: [String: String]
  private(set) var process: Process?
  private var stderrPipe: Pipe?

  /// Starts the daemon and waits until its socket answers.
  init(
    arguments: [String] = [], config: String? = nil, environment: [String: String] = [:],
    directory: TemporaryDirectory = TemporaryDirectory(), start: Bool = true
  ) throws {
    self.directory = directory
    socketPath = directory.file("control.sock")
    statePath = directory.file("state.json")
    var arguments = ["--socket", socketPath, "--state", statePath] + arguments
    if let config { arguments += ["--config", directory.write("sections.json", config)] }
    self.arguments = arguments
    self.environment = environment
    if start { try self.start() }
  }

  /// Starts the daemon. `wrappedForWatchdog` runs it through `sh -c 'WATCHDOG_PID=$$ exec ...'`,
  /// because sd-event only pings when WATCHDOG_PID names the daemon's own pid.
  func start(wrappedForWatchdog: Bool = false) throws {
    let process = Process()
    if wrappedForWatchdog {
      process.executableURL = URL(fileURLWithPath: "/bin/sh")
      process.arguments = ["-c", "WATCHDOG_PID=$$ exec \"$0\" \"$@\"", Built.sectiond] + arguments
    } else {
      process.executableURL = URL(fileURLWithPath: Built.sectiond)
      process.arguments = arguments
    }
    var env = ProcessInfo.processInfo.environment
    env.removeValue(forKey: "NOTIFY_SOCKET")
    env.removeValue(forKey: "LISTEN_FDS")
    for (key, value) in environment { env[key] = value }
    process.environment = env
    let pipe = Pipe()
    process.standardError = pipe
    process.standardOutput = FileHandle.nullDevice
    try process.run()
    self.process = process
    stderrPipe = pipe
    try waitUntilServing()
  }

  /// Polls the socket until a PING is answered, or fails after `timeout` seconds.
  func waitUntilServing(timeout: Double = 10) throws {
    let deadline = Date().addingTimeInterval(timeout)
    while Date() < deadline {
      if let process, !process.isRunning {
        throw TestFailure("sectiond exited with \(process.terminationStatus): \(standardError())")
      }
      if let client = try? LineClient(path: socketPath), (try? client.request("PING")) == ["OK"] {
        return
      }
      usleep(20_000)
    }
    throw TestFailure("sectiond did not answer on \(socketPath) within \(timeout) s")
  }

  func connect() throws -> LineClient { try LineClient(path: socketPath) }

  /// Sends `signal` and waits for the process to exit; returns its exit status.
  @discardableResult
  func stop(signal: Int32 = SIGTERM) -> Int32 {
    guard let process, process.isRunning else { return process?.terminationStatus ?? 0 }
    kill(process.processIdentifier, signal)
    process.waitUntilExit()
    return process.terminationStatus
  }

  /// What the daemon wrote to stderr so far; only call once the process has exited.
  func standardError() -> String {
    guard let stderrPipe else { return "" }
    let data = stderrPipe.fileHandleForReading.readDataToEndOfFile()
    return String(decoding: data, as: UTF8.self)
  }

  deinit { stop(signal: SIGKILL) }
}

/// A blocking line-oriented client with timeouts, for talking protocol 1 in tests.
final class LineClient {
  let fd: FileDescriptor
  private var buffer: [UInt8] = []
  private(set) var closedByPeer = false

  init(path: String) throws {
    Posix.ProcessInfo.ignoreBrokenPipes()
    fd = try UnixSocket.connect(path: path)
  }

  deinit { fd.close() }

  func send(_ text: String) throws {
    try fd.writeAll(Array(text.utf8))
  }

  func send(bytes: [UInt8]) throws {
    try fd.writeAll(bytes)
  }

  /// Sends one request line and reads its reply up to and including the status line.
  func request(_ line: String, timeout: Double = 5) throws -> [String] {
    try send(line + "\n")
    return try readReply(timeout: timeout)
  }

  /// Reads lines until a status line (`OK...` or `ERR...`); events in between are kept aside.
  func readReply(timeout: Double = 5) throws -> [String] {
    var lines: [String] = []
    while true {
      guard let line = try readLine(timeout: timeout) else {
        throw TestFailure("connection ended after \(lines)")
      }
      if line.hasPrefix("!") { events.append(line); continue }
      lines.append(line)
      if line == "OK" || line.hasPrefix("OK ") || line.hasPrefix("ERR ") { return lines }
    }
  }

  /// Events that arrived while a reply was being read.
  var events: [String] = []

  /// The next event line, taking first those already seen during replies.
  func readEvent(timeout: Double = 5) throws -> String? {
    if !events.isEmpty { return events.removeFirst() }
    return try readLine(timeout: timeout)
  }

  /// The next line without its LF, nil at end of input; throws on timeout.
  func readLine(timeout: Double = 5) throws -> String? {
    let deadline = Date().addingTimeInterval(timeout)
    while true {
      if let newline = buffer.firstIndex(of: 10) {
        let line = String(decoding: buffer[..<newline], as: UTF8.self)
        buffer.removeSubrange(...newline)
        return line
      }
      if closedByPeer { return nil }
      let remaining = deadline.timeIntervalSinceNow
      if remaining <= 0 { throw TestFailure("timed out waiting for a line; have \(buffer.count) bytes") }
      var poller = pollfd(fd: fd.rawValue, events: Int16(POLLIN), revents: 0)
      _ = poll(&poller, 1, Int32(remaining * 1000) + 1)
      if poller.revents == 0 { continue }
      var chunk = [UInt8](repeating: 0, count: 65536)
      let count = chunk.withUnsafeMutableBytes { Glibc.read(fd.rawValue, $0.baseAddress, $0.count) }
      if count <= 0 { closedByPeer = true } else { buffer.append(contentsOf: chunk[..<count]) }
    }
  }

  /// True when the peer closes the connection within `timeout` seconds (after any pending lines).
  func waitForClose(timeout: Double = 5) throws -> Bool {
    while let _ = try readLine(timeout: timeout) {}
    return true
  }
}

/// What a finished command printed and how it exited.
struct CommandResult {
  let status: Int32
  let standardOutput: String
  let standardError: String
}

/// Runs `executable` to completion with `input` on stdin (or none) and captures its output.
func runCommand(
  _ executable: String, _ arguments: [String], environment: [String: String] = [:], input: String? = nil
) throws -> CommandResult {
  let process = Process()
  process.executableURL = URL(fileURLWithPath: executable)
  process.arguments = arguments
  var env = ProcessInfo.processInfo.environment
  for key in ["NOTIFY_SOCKET", "LISTEN_FDS", "LISTEN_PID", "LISTEN_FDNAMES"] { env.removeValue(forKey: key) }
  for (key, value) in environment { env[key] = value }
  process.environment = env
  let output = Pipe()
  let error = Pipe()
  let stdin = Pipe()
  process.standardOutput = output
  process.standardError = error
  process.standardInput = stdin
  try process.run()
  if let input { stdin.fileHandleForWriting.write(Data(input.utf8)) }
  try stdin.fileHandleForWriting.close()
  let outData = output.fileHandleForReading.readDataToEndOfFile()
  let errData = error.fileHandleForReading.readDataToEndOfFile()
  process.waitUntilExit()
  return CommandResult(
    status: process.terminationStatus, standardOutput: String(decoding: outData, as: UTF8.self),
    standardError: String(decoding: errData, as: UTF8.self))
}
