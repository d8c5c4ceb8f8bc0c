// The loop's iteration is Systemd's internal sd_event: only a build for testing (debug, the
// one `swift test` makes) can reach it, so a release build compiles this module empty.
#if DEBUG
  import CSystemd
  import Foundation
  import Glibc

  @testable import Etcd
  @testable import Systemd

  /// Three etcd members on loopback, started by Tests/System/lib/etcd_lab.py (serve mode) for
  /// one test and stopped when it ends: the script removes everything at the end of its input,
  /// so the members go also when this process dies. Nil, with a SKIP line printed, when etcd is
  /// not installed (scripts/deps.sh --test installs it).
  final class EtcdLab {
    let urls: [String]
    /// With `tls`: the lab's CA, and a client certificate and key it signed.
    let tls: EtcdClient.TLSFiles?
    private let script: LabScript

    /// With `tls`, the members serve https with a CA made for the lab and ask for client certificates.
    init?(tls: Bool = false) throws {
      script = try LabScript("etcd_lab.py", ["serve"] + (tls ? ["--tls"] : []))
      let first = script.readLine()
      if first.hasPrefix("SKIP ") {
        print("SKIP a test on etcd: \(first.dropFirst(5))")
        return nil
      }
      guard first.hasPrefix("ready ") else { throw EtcdLabFailure("etcd_lab.py said: \(first)") }
      urls = first.dropFirst(6).split(separator: ",").map(String.init)
      if tls {
        let files = script.readLine().split(separator: " ").dropFirst().map(String.init)
        guard files.count == 3 else { throw EtcdLabFailure("etcd_lab.py gave no TLS files") }
        self.tls = EtcdClient.TLSFiles(certificateAuthority: files[0], certificate: files[1], key: files[2])
      } else {
        self.tls = nil
      }
    }

    /// Sends `signal` (SIGKILL waits for the member to be gone) to member `index`.
    func signal(_ index: Int, _ signal: String = "SIGKILL") throws {
      try script.command("kill \(index) \(signal)")
    }

    /// Raises etcd's NOSPACE alarm (`true`), as etcd does at its quota, or disarms it.
    func noSpace(_ raised: Bool) throws {
      try script.command("alarm " + (raised ? "ACTIVATE" : "DEACTIVATE"))
    }
  }

  /// A forwarder in front of one etcd member (Tests/System/lib/etcd_gate.py, serve mode) that
  /// holds what a client sends, or what etcd answers, until it is opened: so that a test makes a
  /// commit lose its compare, or its answer never arrive, for certain.
  final class EtcdGate {
    /// Where a client reaches the member through the gate.
    let url: String
    private let script: LabScript

    init(_ member: String) throws {
      script = try LabScript("etcd_gate.py", ["serve", member])
      let first = script.readLine()
      guard first.hasPrefix("ready ") else { throw EtcdLabFailure("etcd_gate.py said: \(first)") }
      url = String(first.dropFirst(6))
    }

    /// Whatever clients send from now on is held.
    func shut() throws { try script.command("shut") }

    /// What was held goes on, and nothing is held any more.
    func open() throws { try script.command("open") }

    /// From now on, what etcd sends back with `needle` in it is held until `open()`.
    func holdAnswers(_ needle: String) throws { try script.command("hold_answers " + needle) }

    /// Whether `needle` is among what was held since `shut()`, now: the test's loop must run
    /// for a client on it to send anything, so the test asks between iterations.
    func holds(_ needle: String) throws -> Bool {
      try script.command("held " + needle, accepting: ["ok", "no"]) == "ok"
    }
  }

  /// One of Tests/System/lib's scripts in serve mode: commands on its input, one line each, and
  /// an answer line for each. The script stops at the end of its input, which comes when this
  /// process closes it or dies.
  private final class LabScript {
    private let process: Process
    private let commands: FileHandle
    private let replies: FileHandle
    private let name: String

    init(_ name: String, _ arguments: [String]) throws {
      self.name = name
      let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().deletingLastPathComponent()
      process = Process()
      process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
      process.arguments = ["python3", root.path + "/Tests/System/lib/" + name] + arguments
      let input = Pipe()
      let output = Pipe()
      process.standardInput = input
      process.standardOutput = output
      commands = input.fileHandleForWriting
      replies = output.fileHandleForReading
      try process.run()
      // This process's ends of the pipes go to no other child (a bus, a caller): held open
      // there, they would keep the script from seeing its end when the test dies.
      for end in [commands, replies] { _ = fcntl(end.fileDescriptor, F_SETFD, FD_CLOEXEC) }
    }

    /// Sends `line`; its answer, which must be one of `accepting`.
    @discardableResult
    func command(_ line: String, accepting: [String] = ["ok"]) throws -> String {
      commands.write(Data((line + "\n").utf8))
      let reply = readLine()
      guard accepting.contains(reply) else { throw EtcdLabFailure("\(name): \(line): \(reply)") }
      return reply
    }

    /// One line of the script's output, read a byte at a time (nothing after it is consumed).
    func readLine() -> String {
      var bytes: [UInt8] = []
      while let byte = try? replies.read(upToCount: 1), let first = byte.first, first != 0x0A {
        bytes.append(first)
      }
      return String(decoding: bytes, as: UTF8.self)
    }

    deinit {
      try? commands.close()
      process.waitUntilExit()
    }
  }

  struct EtcdLabFailure: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
  }

  /// An sd-event loop run by the test, one iteration at a time, until a call completes.
  final class LoopRunner {
    let loop: EventLoop

    init() throws { loop = try EventLoop() }

    /// Runs the loop until `condition` holds; false when `timeout` seconds passed first.
    @discardableResult
    func run(until condition: () -> Bool, timeout: Double = 20) throws -> Bool {
      let deadline = Date().addingTimeInterval(timeout)
      while !condition() {
        guard Date() < deadline else { return false }
        try check(sd_event_run(loop.event, 10_000), "sd_event_run")
      }
      return true
    }

    /// Starts a call and runs the loop until it completes; its result.
    func wait<Answer>(
      timeout: Double = 20, _ call: (@escaping (Result<Answer, EtcdError>) -> Void) -> Void
    ) throws -> Result<Answer, EtcdError> {
      var result: Result<Answer, EtcdError>?
      call { result = $0 }
      guard try run(until: { result != nil }, timeout: timeout), let result else {
        throw EtcdLabFailure("no answer within \(timeout) s")
      }
      return result
    }
  }

  /// CLOCK_MONOTONIC in seconds.
  func monotonicSeconds() -> Double {
    var now = timespec()
    clock_gettime(CLOCK_MONOTONIC, &now)
    return Double(now.tv_sec) + Double(now.tv_nsec) / 1e9
  }

  extension Result {
    var value: Success? { try? get() }
    var error: Failure? {
      guard case .failure(let error) = self else { return nil }
      return error
    }
  }

  /// The UTF-8 bytes of `text`: keys and values are bytes.
  func bytes(_ text: String) -> [UInt8] { Array(text.utf8) }
#endif
