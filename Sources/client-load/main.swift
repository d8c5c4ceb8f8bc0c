import Glibc
import Posix
import SectionClient
import Synchronization

// client-load: the bench's load generator on SectionClient (bench/bench.py, `client_*`
// scenarios): `-c` AsyncClient connections, each with `-d` tasks sending `TOGGLE <i>`
// (connection i toggles section i) as fast as replies come, so `-d` requests are in flight on
// each connection. The tasks run on `AsyncClient.executor`, the library's I/O thread, as a
// program after throughput would run them. With --pipeline, each connection has one task that
// sends its `-d` requests together and waits for them together (`perform(each:)`), again and
// again. Counts the replies that arrive in the `-t` seconds after a `-w` warm-up and
// prints one JSON line, {"rps": ..., "replies": ..., "errors": ...}, as bench/loadgen.c does.
//
//   client-load --socket PATH [-c 50] [-d 1] [--pipeline] [-t 2] [-w 0.3] [--sections N]
//
// With --events it consumes instead: one `SectionEvents` sequence for `-t` seconds after its
// snapshot, and prints {"events": ..., "rate": ..., "snapshots": ...}; a snapshot after the
// first means it fell behind and the daemon skipped events.

struct Options {
  var socket = ""
  var connections = 50
  var depth = 1
  var seconds = 2.0
  var warmup = 0.3
  /// Connection i toggles section i modulo this (bench.py's config has 50 sections).
  var sections = 50
  var events = false
  var pipeline = false

  init(_ arguments: [String]) {
    var rest = arguments[...]
    while let flag = rest.popFirst() {
      if flag == "--events" || flag == "--pipeline" {
        if flag == "--events" { events = true } else { pipeline = true }
        continue
      }
      let value = rest.popFirst() ?? ""
      switch flag {
      case "--socket": socket = value
      case "-c": connections = Int(value) ?? connections
      case "-d": depth = Int(value) ?? depth
      case "-t": seconds = Double(value) ?? seconds
      case "-w": warmup = Double(value) ?? warmup
      case "--sections": sections = Int(value) ?? sections
      default:
        say("client-load: unknown option \(flag)", to: 2)
        exit(2)
      }
    }
  }
}

func say(_ text: String, to fd: Int32 = 1) {
  var line = text + "\n"
  line.withUTF8 { _ = Glibc.write(fd, $0.baseAddress, $0.count) }
}

/// Replies counted by every task, without a lock (as bench/loadgen.c counts): a lock per
/// reply would be the load generator's cost, not the library's.
final class Counts: Sendable {
  private let replies = Atomic<Int>(0)
  private let errors = Atomic<Int>(0)
  private let counting = Atomic<Bool>(false)
  private let stopped = Atomic<Bool>(false)

  var isStopped: Bool { stopped.load(ordering: .relaxed) }
  func add(error: Bool) {
    guard counting.load(ordering: .relaxed) else { return }
    if error {
      errors.add(1, ordering: .relaxed)
    } else {
      replies.add(1, ordering: .relaxed)
    }
  }
  func start() { counting.store(true, ordering: .relaxed) }
  func stop() -> (Int, Int) {
    counting.store(false, ordering: .relaxed)
    stopped.store(true, ordering: .relaxed)
    return (replies.load(ordering: .relaxed), errors.load(ordering: .relaxed))
  }
}

let options = Options(Array(CommandLine.arguments.dropFirst()))
/// The events of one sequence for `seconds` after its first snapshot: how many, how many
/// snapshots came after the first, and the seconds they took.
func consume(seconds: Double) async throws(ClientError) -> (events: Int, snapshots: Int, elapsed: Double) {
  var events = 0
  var snapshots = -1
  var from: UInt64 = 0
  for try await event in SectionEvents(path: options.socket, name: "client-load") {
    if case .state = event {
      snapshots += 1
      if from == 0 { from = monotonicMicroseconds() }
      continue
    }
    events += 1
    if monotonicMicroseconds() - from >= UInt64(seconds * 1e6) { break }
  }
  return (events, snapshots, Double(monotonicMicroseconds() - from) / 1e6)
}

if options.events {
  do {
    let (events, snapshots, elapsed) = try await consume(seconds: options.seconds)
    say(#"{"events": \#(events), "rate": \#(Double(events) / elapsed), "snapshots": \#(snapshots)}"#)
    exit(0)
  } catch {
    say("client-load: \(error.message)", to: 2)
    exit(1)
  }
}
let clients: [AsyncClient]
do {
  clients = try (0..<options.connections).map { _ throws(ClientError) in try AsyncClient(path: options.socket)
  }
} catch {
  say("client-load: \(error.message)", to: 2)
  exit(1)
}
let counts = Counts()
let result = await withTaskGroup(of: Void.self) { group -> (Int, Int) in
  for (index, client) in clients.enumerated() where options.pipeline {
    group.addTask(executorPreference: AsyncClient.executor) {
      let requests = Array(repeating: Request.toggle("\(index % options.sections)"), count: options.depth)
      while !counts.isStopped {
        for outcome in await client.perform(each: requests) {
          if case .failure = outcome { counts.add(error: true) } else { counts.add(error: false) }
        }
      }
    }
  }
  for (index, client) in clients.enumerated() where !options.pipeline {
    for _ in 0..<options.depth {
      group.addTask(executorPreference: AsyncClient.executor) {
        let request = Request.toggle("\(index % options.sections)")
        while !counts.isStopped {
          do {
            try await client.perform(request)
            counts.add(error: false)
          } catch {
            counts.add(error: true)
          }
        }
      }
    }
  }
  try? await Task.sleep(nanoseconds: UInt64(options.warmup * 1e9))
  counts.start()
  let from = monotonicMicroseconds()
  try? await Task.sleep(nanoseconds: UInt64(options.seconds * 1e9))
  let (replies, errors) = counts.stop()
  let elapsed = Double(monotonicMicroseconds() - from) / 1_000_000
  await group.waitForAll()
  say(#"{"rps": \#(Double(replies) / elapsed), "replies": \#(replies), "errors": \#(errors)}"#)
  return (replies, errors)
}
exit(result.1 == 0 ? 0 : 1)
