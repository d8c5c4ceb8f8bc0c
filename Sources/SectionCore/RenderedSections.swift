/// The parts of replies that only change when the config does, rendered once at load.
struct RenderedSections {
  /// `section <index> <id> ` for each section.
  private var heads: [[UInt8]] = []
  /// ` <item-count> <title>\n` for each section.
  private var tails: [[UInt8]] = []
  /// Every `item <index> <position> <text>\n` line of each section, as one block.
  private(set) var items: [[UInt8]] = []
  /// ` <index> <id>\n`, the end of each section's `!opened` and `!closed` events.
  private var eventTails: [[UInt8]] = []

  init(_ sections: [Section]) {
    for (index, section) in sections.enumerated() {
      heads.append(Array("section \(index) \(section.id) ".utf8))
      tails.append(Array(" \(section.items.count) \(section.title)\n".utf8))
      eventTails.append(Array(" \(index) \(section.id)\n".utf8))
      var block: [UInt8] = []
      for (position, item) in section.items.enumerated() {
        block.append("item \(index) \(position) \(item)\n")
      }
      items.append(block)
    }
  }

  func appendSectionLine(_ index: Int, open: Bool, to buffer: inout [UInt8]) {
    buffer.append(contentsOf: heads[index])
    buffer.append(contentsOf: open ? RenderedSections.open : RenderedSections.closed)
    buffer.append(contentsOf: tails[index])
  }

  /// Appends `!opened <rev> <index> <id>` or `!closed ...`, with its LF.
  func appendEvent(opened: Bool, revision: UInt64, index: Int, to buffer: inout [UInt8]) {
    buffer.append(contentsOf: opened ? RenderedSections.openedEvent : RenderedSections.closedEvent)
    buffer.appendDecimal(revision)
    buffer.append(contentsOf: eventTails[index])
  }

  private static let openedEvent = Array("!opened ".utf8)
  private static let closedEvent = Array("!closed ".utf8)
  private static let open = Array("open".utf8)
  private static let closed = Array("closed".utf8)

  /// The HELP reply.
  static let help: [UInt8] = {
    var buffer: [UInt8] = []
    for verb in Verb.allCases { buffer.append("help \(verb.usage) - \(verb.summary)\n") }
    buffer.append("OK\n")
    return buffer
  }()
}
