import Testing

@testable import SectionClient
@testable import SectionCtl

@Suite struct ArgumentParserTests {
  private func parse(_ arguments: String...) throws -> Invocation {
    try ArgumentParser.parse(arguments)
  }

  /// The usage message for `arguments`, or nil when they parse.
  private func usageError(_ arguments: String...) -> String? {
    do {
      _ = try ArgumentParser.parse(arguments)
      return nil
    } catch {
      #expect(error.exitStatus == .usage)
      guard case .usage(let message) = error else { return "not a usage error: \(error)" }
      return message
    }
  }

  @Test func noCommandLists() throws {
    // Without a command: list, or the shell on a terminal (the Runner decides).
    #expect(try parse() == Invocation(command: .list, commandGiven: false))
  }

  @Test func everyCommandWithoutArguments() throws {
    #expect(try parse("list").command == .list)
    #expect(try parse("view").command == .view)
    #expect(try parse("status").command == .status)
    #expect(try parse("reload").command == .reload)
    #expect(try parse("ping").command == .ping)
    #expect(try parse("mode").command == .mode(nil))
    #expect(try parse("watch").command == .watch(count: nil, view: false, from: nil))
    #expect(try parse("--readonly", "ui") == Invocation(command: .ui, readonly: true))
  }

  @Test func onceATextHasBegunEveryWordIsTheText() throws {
    // Before, this added "Call home" and switched to JSON; "-2" was an unknown option.
    let call = try parse("item", "add", "today", "Call", "-j", "home")
    #expect(call.command.editLine == "ITEM INSERT today end Call -j home")
    #expect(!call.json)
    #expect(
      try parse("item", "add", "today", "Buy", "milk", "-2", "liters").command.editLine
        == "ITEM INSERT today end Buy milk -2 liters")
    #expect(
      try parse("add", "news", "Latest", "--at", "0").command.editLine == "INSERT end news Latest --at 0")
    #expect(try parse("rename", "news", "A", "--", "b").command.editLine == "RENAME news A -- b")
    #expect(try parse("item", "set", "today", "0", "x", "-r").command.editLine == "ITEM SET today 0 x -r")
    // Before the text, options are options; '--' lets a text begin with '-'.
    let before = try parse("item", "add", "-j", "--at", "1", "today", "Call")
    #expect(before.json && before.command.editLine == "ITEM INSERT today 1 Call")
    #expect(try parse("add", "news", "--", "-5 degrees").command.editLine == "INSERT end news -5 degrees")
    // Commands without a text keep options anywhere.
    #expect(try parse("open", "news", "-j").json)
  }

  @Test func reloadFreshTakesForce() throws {
    #expect(try parse("reload", "--fresh").command == .reloadFresh(force: false))
    #expect(try parse("reload", "--fresh", "--force").command == .reloadFresh(force: true))
    #expect(usageError("reload", "--force") == "--force works only with reload --fresh")
  }

  @Test func uiTakesNoArgumentsAndNoJSON() {
    #expect(usageError("ui", "fruit")?.contains("ui takes no arguments") == true)
    #expect(usageError("--json", "ui")?.contains("--json does not apply to ui") == true)
    #expect(usageError("ui", "--count", "3")?.contains("--count works only with watch") == true)
  }

  @Test func commandsWithArguments() throws {
    #expect(try parse("items", "fruit").command == .items("fruit"))
    #expect(try parse("open", "1", "fruit").command == .change(.open, refs: ["1", "fruit"]))
    #expect(try parse("close", "2").command == .change(.close, refs: ["2"]))
    #expect(try parse("toggle", "a", "b", "c").command == .change(.toggle, refs: ["a", "b", "c"]))
    #expect(try parse("open", "--all").command == .changeAll(.open))
    #expect(try parse("close", "--all").command == .changeAll(.close))
    #expect(try parse("mode", "exclusive").command == .mode(.exclusive))
    #expect(try parse("mode", "MULTI").command == .mode(.multi))
    #expect(try parse("send", "PING", "LIST").command == .send(["PING", "LIST"]))
    #expect(try parse("send", "PING\nLIST\n").command == .send(["PING", "LIST"]))
    #expect(try parse("watch", "--count", "3", "--view").command == .watch(count: 3, view: true, from: nil))
    #expect(try parse("watch", "--count=2").command == .watch(count: 2, view: false, from: nil))
  }

  @Test func globalOptionsGoBeforeOrAfterTheCommand() throws {
    let expected = Invocation(command: .list, socket: "/tmp/s.sock", readonly: true, json: true)
    #expect(try parse("--socket", "/tmp/s.sock", "--readonly", "--json", "list") == expected)
    #expect(try parse("list", "--json", "--socket=/tmp/s.sock", "--readonly") == expected)
    var implied = expected
    implied.commandGiven = false
    #expect(try parse("--json", "--readonly", "--socket", "/tmp/s.sock") == implied)
  }

  @Test func readonlySocketNamesTheSocketAndImpliesReadonly() throws {
    let expected = Invocation(command: .list, readonly: true, readonlySocket: "/x/ro.sock")
    #expect(
      try parse("--readonly-socket", "/x/ro.sock")
        == Invocation(command: .list, readonly: true, readonlySocket: "/x/ro.sock", commandGiven: false))
    #expect(try parse("list", "--readonly-socket=/x/ro.sock", "--readonly") == expected)
    #expect(usageError("--readonly-socket")?.contains("needs a value") == true)
    #expect(usageError("--socket", "/c.sock", "--readonly-socket", "/r.sock")?.contains("give one") == true)
  }

  @Test func doubleDashEndsOptions() throws {
    #expect(try parse("send", "--", "--not-an-option").command == .send(["--not-an-option"]))
  }

  @Test func help() throws {
    #expect(try parse("--help").command == .help(nil))
    #expect(try parse("-h").command == .help(nil))
    #expect(try parse("help").command == .help(nil))
    #expect(try parse("help", "watch").command == .help(.watch))
    #expect(try parse("open", "--help").command == .help(.open))
    #expect(try parse("-h", "items").command == .help(.items))
    // Help wins over arguments that would otherwise be wrong, so it can always be reached.
    #expect(try parse("items", "--help").command == .help(.items))
  }

  @Test func version() throws {
    #expect(try parse("--version").command == .version)
  }

  @Test func unknownCommandListsTheCommands() {
    let message = usageError("lsit")
    #expect(message?.contains("unknown command 'lsit'") == true)
    #expect(message?.contains("list, view, items") == true)
  }

  @Test func unknownOptionIsNamed() {
    #expect(usageError("--jsno")?.contains("unknown option '--jsno'") == true)
    #expect(usageError("list", "-x")?.contains("'-x'") == true)
  }

  @Test func wrongArgumentCounts() {
    #expect(usageError("items") != nil)
    #expect(usageError("items", "a", "b") != nil)
    #expect(usageError("open")?.contains("--all") == true)
    #expect(usageError("toggle")?.contains("--all") == false)
    #expect(usageError("list", "extra")?.contains("list takes no arguments, got 'extra'") == true)
    #expect(usageError("mode", "exclusive", "multi") != nil)
    #expect(usageError("send") != nil)
    #expect(usageError("help", "a", "b") != nil)
  }

  @Test func badValues() {
    #expect(usageError("mode", "single")?.contains("unknown mode 'single'") == true)
    #expect(usageError("watch", "--count", "0") != nil)
    #expect(usageError("watch", "--count", "many")?.contains("'many'") == true)
    #expect(usageError("watch", "--count") == "option --count needs a value")
    #expect(usageError("--socket") == "option --socket needs a value")
    #expect(usageError("--socket=") == "option --socket needs a value")
    #expect(usageError("--json=yes") == "option --json takes no value")
    #expect(usageError("help", "nothing")?.contains("'nothing'") == true)
  }

  @Test func optionsThatDoNotApplyAreRefused() {
    #expect(usageError("toggle", "--all") == "--all works only with open and close")
    #expect(usageError("list", "--count", "2") == "--count works only with watch")
    #expect(usageError("view", "--view") == "--view works only with watch")
    #expect(usageError("send", "--json", "PING")?.contains("--json does not apply to send") == true)
    #expect(usageError("open", "--all", "1")?.contains("takes no sections") == true)
  }

  /// A ref becomes one word of a request line: a space or newline in it would smuggle in another request.
  @Test func referencesMustBeSingleWords() {
    #expect(usageError("open", "a b")?.contains("'a b' is not a section index or id") == true)
    #expect(usageError("toggle", "1\nQUIT") != nil)
    #expect(usageError("items", "") != nil)
    #expect(usageError("close", "a\tb") != nil)
  }

  @Test func edits() throws {
    #expect(try parse("add", "news", "Latest", "news").command.editLine == "INSERT end news Latest news")
    #expect(try parse("add", "--at", "0", "news", "N").command.editLine == "INSERT 0 news N")
    #expect(try parse("rm", "2").command.editLine == "DELETE 2")
    #expect(try parse("mv", "news", "0").command.editLine == "MOVE news 0")
    #expect(try parse("--json", "rename", "news", "The", "news").command.editLine == "RENAME news The news")
    #expect(
      try parse("item", "add", "news", "Call", "Bob").command.editLine == "ITEM INSERT news end Call Bob")
    #expect(try parse("item", "add", "--at=1", "news", "x").command.editLine == "ITEM INSERT news 1 x")
    #expect(try parse("item", "rm", "news", "0").command.editLine == "ITEM DELETE news 0")
    #expect(try parse("item", "mv", "news", "0", "2").command.editLine == "ITEM MOVE news 0 2")
    #expect(try parse("item", "set", "news", "0", "a b").command.editLine == "ITEM SET news 0 a b")
    #expect(try parse("batch").command == .batch)
  }

  @Test func badEdits() {
    #expect(usageError("add", "news")?.hasPrefix("add needs a title: sectionctl add") == true)
    #expect(usageError("rm") == "rm needs a section (an index or an id): sectionctl rm [--json] REF")
    #expect(usageError("rm", "a", "b") == "unexpected 'b': sectionctl rm [--json] REF")
    #expect(usageError("mv", "a", "x") == "the index to move to must be a number, 0 or more, not 'x'")
    #expect(
      usageError("item", "frob", "a") == "unknown item action 'frob'; the actions are add, rm, mv and set")
    #expect(usageError("item", "rm", "--at", "1", "a", "0") == "--at works only with add and item add")
    #expect(usageError("rm", "--at", "1", "a") == "--at works only with add and item add")
    #expect(usageError("add", "--at", "-1", "a", "A") == "--at needs an index, 0 or more, not '-1'")
    #expect(
      usageError("rename", "a", "two\nlines")
        == "the a title must be one line of text, without control characters")
    #expect(usageError("batch", "x") == "batch takes no arguments, got 'x'")
  }

  /// One-shot commands wait for the daemon at most --timeout seconds; 0 is no limit.
  @Test func timeout() throws {
    #expect(try parse("ping").timeout == Invocation.defaultTimeout)
    #expect(try parse("--timeout", "1.5", "ping").timeout == 1.5)
    #expect(try parse("view", "--timeout=0").timeout == 0)
    #expect(usageError("--timeout", "soon", "ping")?.contains("--timeout needs a number of seconds") == true)
    #expect(usageError("--timeout", "-1", "ping") != nil)
    #expect(usageError("--timeout", "5", "watch")?.contains("waits for the daemon by design") == true)
    #expect(usageError("--timeout", "5", "pipe") != nil)
    #expect(usageError("--timeout", "5", "ui") != nil)
  }

  /// Invalid UTF-8 in an argument is refused, not stored as U+FFFD.
  @Test func argumentsMustBeUTF8() throws {
    var arguments: [[CChar]] = [
      Array("sectionctl\0".utf8CString.dropLast()), Array("rename\0".utf8CString.dropLast()),
    ]
    arguments.append([0x6E, 0x61, CChar(bitPattern: 0xEF), 0x76, 0x65, 0])
    var pointers: [UnsafeMutablePointer<CChar>?] = []
    defer { pointers.forEach { $0?.deallocate() } }
    for argument in arguments {
      let pointer = UnsafeMutablePointer<CChar>.allocate(capacity: argument.count)
      pointer.initialize(from: argument, count: argument.count)
      pointers.append(pointer)
    }
    #expect(throws: Never.self) { try Tool.checkEncoding(Array(pointers.prefix(2))) }
    do {
      try Tool.checkEncoding(pointers)
      Issue.record("accepted invalid UTF-8")
    } catch {
      #expect(error.exitStatus == .usage)
      #expect(
        error.diagnostic.contains(#"argument 2 is not valid UTF-8 ('na\xefve')"#), "\(error.diagnostic)")
    }
  }

  /// -s, -r and -j, alone, together or with the value attached.
  @Test func shortOptions() throws {
    let expected = Invocation(command: .list, socket: "/s.sock", readonly: true, json: true)
    #expect(try parse("-s", "/s.sock", "-r", "-j", "list") == expected)
    #expect(try parse("list", "-rj", "-s/s.sock") == expected)
    #expect(try parse("-jrs", "/s.sock", "list") == expected)
    #expect(usageError("-x", "list")?.contains("unknown option '-x'") == true)
    #expect(usageError("list", "-s")?.contains("needs a value") == true)
  }

  @Test func isOpenExportAndShell() throws {
    #expect(try parse("is-open", "inbox").command == .isOpen(["inbox"], quiet: false))
    #expect(try parse("is-open", "-q", "a", "b").command == .isOpen(["a", "b"], quiet: true))
    #expect(usageError("is-open")?.contains("at least one section") == true)
    #expect(usageError("list", "-q") == "--quiet (-q) works only with is-open")
    #expect(try parse("export").command == .export)
    #expect(try parse("shell").command == .shell)
    #expect(usageError("--json", "shell")?.contains("does not apply to shell") == true)
  }

  /// `send` refuses what would hang or write into a closed connection.
  @Test func sendChecksBatchAndQuit() throws {
    #expect(try parse("send", "BATCH", "OPEN 0", "END").command == .send(["BATCH", "OPEN 0", "END"]))
    #expect(try parse("send", "PING", "quit").command == .send(["PING", "quit"]))
    #expect(usageError("send", "QUIT", "PING")?.contains("QUIT must be the last line") == true)
    #expect(usageError("send", "batch", "OPEN 0")?.contains("needs its END") == true)
  }

  /// `-l NAME`, `--list NAME`, `--list=NAME`, `-lNAME`; a bad name names the rule.
  @Test func aListByName() throws {
    let media = try ListName(validating: "media")
    #expect(try parse("-l", "media", "view").list == media)
    #expect(try parse("view", "--list=media").list == media)
    #expect(try parse("-lmedia", "status").list == media)
    #expect(try parse("view").list == nil)
    for bad in ["../x", "A", String(repeating: "a", count: 33), ""] {
      #expect(usageError("--list", bad, "view")?.contains(ListName.rule) == true, "\(bad)")
    }
    #expect(usageError("view", "-l")?.contains(ListName.rule) == true)
    #expect(try parse("lists", "--json").command == .lists)
    #expect(usageError("lists", "-l", "media") != nil)
  }
}
