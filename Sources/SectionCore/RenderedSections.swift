/// The parts of replies and events that only change when the config does, rendered once at load.
///
/// Every piece lives in one byte array and is appended from it by range: a class with constant
/// storage, so appending a piece touches no reference counts (callgrind: the struct of arrays of
/// arrays it was, read through the service, cost 27 retains and releases per TOGGLE; now 6).
final class RenderedSections {
  private let bytes: [UInt8]
  /// `section <index> <id> ` for each section.
  private let heads: [Range<Int>]
  /// ` <item-count> <title>\n` for each section.
  private let tails: [Range<Int>]
  /// Every `item <index> <position> <text>\n` line of each section, as one block.
  private let items: [Range<Int>]
  /// ` <index> <id>\n`, the end of each section's `!opened` and `!closed` events.
  private let eventTails: [Range<Int>]

  init(_ sections: [Section]) {
    var bytes: [UInt8] = []
    func piece(_ render: (inout [UInt8]) -> Void) -> Range<Int> {
      let start = bytes.count
      render(&bytes)
      return start..<bytes.count
    }
    var heads: [Range<Int>] = []
    var tails: [Range<Int>] = []
    var items: [Range<Int>] = []
    var eventTails: [Range<Int>] = []
    for (index, section) in sections.enumerated() {
      heads.append(piece { $0.append(utf8: "section \(index) \(section.id) ") })
      tails.append(piece { $0.append(utf8: " \(section.items.count) \(section.title)\n") })
      eventTails.append(piece { $0.append(utf8: " \(index) \(section.id)\n") })
      items.append(
        piece { block in
          for (position, item) in section.items.enumerated() {
            block.append(utf8: "item \(index) \(position) \(item)\n")
          }
        })
    }
    self.bytes = bytes
    self.heads = heads
    self.tails = tails
    self.items = items
    self.eventTails = eventTails
  }

  func appendSectionLine(_ index: Int, open: Bool, to buffer: inout [UInt8]) {
    append(heads[index], to: &buffer)
    buffer.append(open ? "open" : "closed")
    append(tails[index], to: &buffer)
  }

  func appendItems(_ index: Int, to buffer: inout [UInt8]) {
    append(items[index], to: &buffer)
  }

  /// Every `item` line of a section, as a block of the immutable rendering to share.
  func items(_ index: Int) -> ArraySlice<UInt8> { bytes[items[index]] }

  /// Appends `!opened <rev> <index> <id>` or `!closed ...`, with its LF.
  func appendEvent(opened: Bool, revision: UInt64, index: Int, to buffer: inout [UInt8]) {
    buffer.append(opened ? "!opened " : "!closed ")
    buffer.appendDecimal(revision)
    append(eventTails[index], to: &buffer)
  }

  private func append(_ piece: Range<Int>, to buffer: inout [UInt8]) {
    bytes.withUnsafeBufferPointer { buffer.append(contentsOf: UnsafeBufferPointer(rebasing: $0[piece])) }
  }

  /// The HELP reply.
  static let help: [UInt8] = {
    var buffer: [UInt8] = []
    for verb in Verb.allCases { buffer.append(utf8: "help \(verb.usage) - \(verb.summary)\n") }
    buffer.append("OK\n")
    return buffer
  }()
}
