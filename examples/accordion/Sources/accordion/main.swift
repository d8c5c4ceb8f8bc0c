import Glibc
import SectionClient

// accordion: shows sectiond's sections as an accordion and draws it again after every change,
// whoever makes it; `accordion toggle ID` toggles a section. The socket is found as sectionctl
// finds it (SECTIOND_SOCKET, your own daemon, the system's). `--count N` stops after N changes.

/// Writes a line at once (standard output unless told), so each frame reaches a pipe as it is drawn.
func say(_ text: String, to fd: Int32 = 1) {
  var line = text + "\n"
  line.withUTF8 { _ = Glibc.write(fd, $0.baseAddress, $0.count) }
}

/// The frame's first line: the revision, and the mode (`Mode`, as every type here, comes
/// with `import SectionClient`).
func header(revision: UInt64, mode: Mode) -> String { "— revision \(revision), \(mode.rawValue) —" }

/// One frame: each section with ▸ (closed) or ▾ (open), and the items of the open ones.
/// What comes from the socket is shown through `VisibleText`, so it cannot act on a terminal.
func draw(_ state: SectionState, using daemon: AsyncClient) async throws(ClientError) {
  say(header(revision: state.revision, mode: state.mode))
  for section in state.sections {
    say("\(section.isOpen ? "▾" : "▸") \(VisibleText.escape(section.title)) (\(section.itemCount))")
    guard section.isOpen else { continue }
    for item in try await daemon.items(section.id) { say("    \(VisibleText.escape(item.text))") }
  }
}

let arguments = Array(CommandLine.arguments.dropFirst())
do {
  let daemon = try AsyncClient.connect(name: "accordion-example")
  if arguments.count == 2, arguments[0] == "toggle" {
    let isOpen = try await daemon.toggle(arguments[1])
    say("\(arguments[1]) is \(isOpen ? "open" : "closed") now")
    exit(0)
  }
  let changes = arguments.count == 2 && arguments[0] == "--count" ? Int(arguments[1]) : nil
  var drawn = 0
  for try await state in daemon.states() {
    try await draw(state, using: daemon)
    if let changes, drawn == changes { break }
    drawn += 1
  }
} catch {
  say("accordion: \(error.message)", to: 2)
  exit(1)
}
