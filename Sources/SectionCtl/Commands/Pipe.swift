import Posix
import SectionClient

/// `sectionctl pipe`: relays bytes between standard input/output and the daemon's socket, so that
/// anything that speaks through a process's standard streams (websocketd, a coprocess, a script)
/// speaks protocol 1. Whatever arrives is passed on at once, so every line goes on as soon as it is
/// complete, in both directions; nothing waits for a buffer to fill.
///
/// One poll loop, so that neither direction can block the other: the socket is non-blocking and
/// what the daemon cannot take yet waits here (and standard input is not read while more than
/// `pendingLimit` bytes wait), because a daemon whose replies to us are piling up stops reading
/// our requests until we read them. Writes to standard output block: its reader depends on nothing
/// we do. End of input half-closes the socket, and the daemon ends the connection once every reply
/// is out, so the relay exits after the last reply; the daemon closing first, or the reader of
/// standard output going away, ends it too.
struct Pipe {
  let path: String
  /// Standard output is a terminal: what the socket sends is shown as text (`TerminalLines`).
  let outputIsTerminal: Bool
  /// What the daemon's history calls the connection: sent first as `CLIENT NAME`, and its
  /// reply kept from the reader, who did not ask.
  let name: String

  /// Bytes read from standard input that the socket has not taken yet, past which input waits.
  static let pendingLimit = 1 << 16

  func run() throws(ClientError) -> ExitStatus {
    let socket = try Connection.socket(path: path)
    defer { socket.close() }
    do {
      try socket.setNonBlocking()
    } catch {
      throw .cannotConnect(path: path, errno: (error as? PosixError)?.errno ?? Errno(0))
    }
    var relay = Relay(socket: socket, filter: outputIsTerminal ? TerminalLines() : nil)
    if let line = ClientName.line(name) {
      relay.toSocket = Array((line + "\n").utf8)
      relay.namingReplyPending = true
    }
    return try relay.run(path: path)
  }
}

/// The loop's state: what is still open and what waits to be written.
private struct Relay {
  let socket: FileDescriptor
  var filter: TerminalLines?
  var inputOpen = true
  var socketWriteOpen = true
  var toSocket: [UInt8] = []
  /// The reply to `CLIENT NAME` has not been read yet: the bytes up to its LF are dropped.
  var namingReplyPending = false
  /// The daemon answered `ERR BUSY` instead (`--max-clients`) and closes: the relay ends with
  /// that error once the line is passed on.
  var busy = false
  var chunk = [UInt8](repeating: 0, count: 1 << 16)

  init(socket: FileDescriptor, filter: TerminalLines?) {
    self.socket = socket
    self.filter = filter
  }

  mutating func run(path: String) throws(ClientError) -> ExitStatus {
    let input = FileDescriptor.standardInput
    let output = FileDescriptor.standardOutput
    while true {
      var watched: [(FileDescriptor, IOEvents)] = [
        (socket, toSocket.isEmpty ? .readable : [.readable, .writable])
      ]
      // Standard output with no events asked: poll still reports it once its reader has gone
      // (or when it is not open at all), and any report ends the relay.
      watched.append((output, []))
      let readsInput = inputOpen && toSocket.count < Pipe.pendingLimit
      if readsInput { watched.append((input, .readable)) }
      let ready: [IOEvents]
      do {
        ready = try Poll.wait(watched, milliseconds: -1)
      } catch {
        throw .connectionLost(path: path)
      }
      if !ready[1].isEmpty { return .success }
      // Replies first: a daemon that answered and closed (QUIT) has its last lines passed on.
      if !ready[0].intersection([.readable, .hangUp]).isEmpty {
        switch readSocket(into: output) {
        case .more: break
        case .daemonClosed where busy: throw .busy(path: path)
        case .daemonClosed, .readerGone: return .success
        case .failed: throw busy ? .busy(path: path) : .connectionLost(path: path)
        }
      }
      if readsInput && !ready[2].isEmpty { readInput(input) }
      if !toSocket.isEmpty && !ready[0].intersection([.writable, .hangUp]).isEmpty && !writeSocket() {
        // The daemon takes no more; reading tells whether it closed (0) or failed (3).
        toSocket = []
        inputOpen = false
        socketWriteOpen = false
      }
      if !inputOpen && toSocket.isEmpty && socketWriteOpen {
        UnixSocket.shutdownWrite(socket)
        socketWriteOpen = false
      }
    }
  }

  /// Reads what standard input has; end of input (or a failure to read it) ends the sending side.
  private mutating func readInput(_ input: FileDescriptor) {
    let result = try? chunk.withUnsafeMutableBytes { try input.read(into: $0) }
    switch result {
    case .done(let count) where count > 0: toSocket += chunk[..<count]
    case .wouldBlock: break
    default: inputOpen = false
    }
  }

  /// Writes what the socket takes now; false when the daemon can no longer receive.
  private mutating func writeSocket() -> Bool {
    let result = try? toSocket.withUnsafeBytes { try socket.write($0) }
    switch result {
    case .done(let count):
      toSocket.removeFirst(count)
      return true
    case .wouldBlock: return true
    case nil: return false
    }
  }

  private enum ReadOutcome { case more, daemonClosed, readerGone, failed }

  /// Passes on what the daemon sent.
  private mutating func readSocket(into output: FileDescriptor) -> ReadOutcome {
    let result: IOResult<Int>
    do {
      result = try chunk.withUnsafeMutableBytes { try socket.read(into: $0) }
    } catch {
      return .failed
    }
    guard case .done(let count) = result else { return .more }
    guard count > 0 else {
      return flush(filter?.finish() ?? [], to: output) ? .daemonClosed : .readerGone
    }
    var read = chunk[..<count]
    if namingReplyPending {
      let end = read.firstIndex(of: 0x0A)
      namingReplyPending = end == nil
      // A busy daemon's `ERR BUSY` comes in its place: the reader is told (the web page shows it).
      busy = SendLine.isBusy(read)
      if !busy { read = end.map { read[($0 + 1)...] } ?? [] }
      if read.isEmpty { return .more }
    }
    let bytes = filter?.filter(read) ?? Array(read)
    return flush(bytes, to: output) ? .more : .readerGone
  }

  /// Writes every byte to standard output; false when it can take no more (its reader has gone).
  private func flush(_ bytes: [UInt8], to output: FileDescriptor) -> Bool {
    (try? output.writeAll(bytes, subject: "standard output")) != nil
  }
}

/// The daemon's bytes for a terminal: each line shown as every other command shows text from
/// the socket (`VisibleText`: controls, C1 and invisible characters escaped, invalid UTF-8 as
/// `\xHH`), so that nothing read from the socket acts on the terminal. A line is passed on
/// when its LF arrives (the daemon sends whole lines, so a person sees no delay); one that
/// grows past `heldLimit` without an LF is passed on in pieces, cut between characters, so a
/// server that never ends a line cannot make the relay hold without bound.
struct TerminalLines {
  private var held: [UInt8] = []

  static let heldLimit = 1 << 16

  mutating func filter(_ bytes: ArraySlice<UInt8>) -> [UInt8] {
    var shown: [UInt8] = []
    var rest = bytes
    while let end = rest.firstIndex(of: 0x0A) {
      held += rest[..<end]
      shown += Self.visible(held) + [0x0A]
      held.removeAll(keepingCapacity: true)
      rest = rest[(end + 1)...]
    }
    held += rest
    if held.count >= Self.heldLimit {
      // Up to the last character that may be incomplete: a lead byte and what follows it.
      let cut = held.lastIndex(where: { $0 & 0xC0 != 0x80 }).map { $0 == 0 ? held.count : $0 } ?? held.count
      shown += Self.visible(held[..<cut])
      held.removeSubrange(..<cut)
    }
    return shown
  }

  /// What is held back once the input has ended: a last line without its LF.
  mutating func finish() -> [UInt8] {
    defer { held.removeAll() }
    return held.isEmpty ? [] : Self.visible(held[...])
  }

  private static func visible(_ bytes: some Collection<UInt8>) -> [UInt8] {
    Array(VisibleText.escape(VisibleText.decode(bytes)).utf8)
  }
}

extension CommandSpec {
  /// `sectionctl pipe`.
  static let pipe = CommandSpec(
    usage: ["pipe [--list-from-query]"],
    summary: "relay standard input and output to the daemon's socket, for scripts and websocketd",
    details: """
      Connects to the socket (the control socket, or the read-only one with --readonly) and relays
      bytes both ways: request lines from standard input go to the daemon, its replies and events
      to standard output, each as soon as it arrives (never held back to fill a buffer). At end of
      input it sends what is left and waits for the last replies; it exits when the daemon closes
      the connection (after QUIT, or once every reply is out) or standard output's reader goes away.
      One pipe is one protocol client: SUBSCRIBE and the events follow on the same stream.
      This is what websocketd runs for each browser connection of sectiond's web page.
      Options:
        --list-from-query   for websocketd: the page's ?list=NAME ($QUERY_STRING) picks the
                            list NAME, whose socket of the same name is in the directory NAME
                            beside the socket given (/run/sectiond/readonly.sock gives
                            /run/sectiond/NAME/readonly.sock); without it, that socket's list
      Exits 0 when the connection ends, 3 when the daemon cannot be reached or the connection fails.
      """,
    example: "sectionctl --readonly pipe <<< 'VIEW'",
    check: { (options) throws(CommandLineError) in
      if options.timeout != nil {
        throw .usage("--timeout applies to one-shot commands; pipe waits for the daemon by design")
      }
      if options.json {
        throw .usage("--json does not apply to pipe, which prints the daemon's lines as they are")
      }
    },
    parse: { (arguments, _) throws(CommandLineError) in
      try ArgumentParser.none(arguments, .pipe)
      return .pipe
    },
    run: { (runner) throws(CommandLineError) in try runner.runPipe() })
}

extension Runner {
  fileprivate func runPipe() throws(CommandLineError) -> ExitStatus {
    let path: String
    do {
      path =
        invocation.listFromQuery
        ? try SocketLocation.fromQuery(environment.nonEmpty("QUERY_STRING"), beside: socketPath())
        : socketPath()
    } catch {
      throw .usage("the page's ?list=: \(error)")
    }
    // Under websocketd, the page's user is the one behind each change.
    let name =
      invocation.name ?? environment.nonEmpty("REMOTE_ADDR").map { "web:\($0)" } ?? "sectionctl-pipe"
    let pipe = Pipe(
      path: path, outputIsTerminal: environment.outputIsTerminal,
      name: String(decoding: ClientName.asName(Array(name.utf8)), as: UTF8.self))
    return try CommandLineError.lifting { () throws(ClientError) in try pipe.run() }
  }
}
