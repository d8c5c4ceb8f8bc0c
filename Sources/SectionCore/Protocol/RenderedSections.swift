import SectionGrammar

/// The parts of replies and events that change only when a section's title or items do,
/// rendered once per section.
///
/// The pieces hold no section index: an edit near the top of the list shifts every index
/// below it, and re-rendering the list would make each edit cost as much as the list. The
/// index is written as a decimal when a line is sent; an edit renders again only the pieces of the
/// sections it changed (`apply`). Item blocks, which do hold the index, are rendered when first
/// asked for and kept with the index they were rendered for.
final class RenderedSections: EventSectionIDs {
  /// One section's pieces. A class, so that moving it in the list moves a reference.
  private final class Piece {
    /// The id, with a space before it.
    let id: [UInt8]
    private(set) var title: String
    private(set) var itemCount: Int
    /// ` <item-count> <title>\n`, copied into each line that shows it.
    private(set) var tail: [UInt8] = []
    /// Every `item <index> <position> <text>\n` line, for the index it was rendered at; never
    /// edited once made (replies share it by reference), only replaced.
    var items: (index: Int, block: [UInt8])?

    init(_ section: Section) {
      var id: [UInt8] = [0x20]
      id.append(utf8: section.id)
      self.id = id
      title = section.title
      itemCount = section.items.count
      renderTail()
    }

    /// The title or the items changed: renders the tail again in its own storage (an ITEM
    /// INSERT must not cost an allocation more than it needs) and forgets the item block.
    func update(title: String, itemCount: Int) {
      self.title = title
      self.itemCount = itemCount
      items = nil
      renderTail()
    }

    /// `section <index> <id> open|closed <item-count> <title>`.
    func appendLine(_ index: Int, open: Bool, to buffer: inout TextWriter) {
      buffer.append("section ")
      buffer.appendDecimal(index)
      buffer.append(contentsOf: id)
      buffer.append(open ? " open" : " closed")
      buffer.append(contentsOf: tail)
    }

    /// Every `item` line of this section, at `index`, whose items are `texts`, as a block to share.
    func items(_ index: Int, of texts: [String]) -> ArraySlice<UInt8> {
      if let cached = items, cached.index == index { return cached.block[...] }
      var block: [UInt8] = []
      block.appendText { block in
        for (position, item) in texts.enumerated() {
          block.append("item ")
          block.appendDecimal(index)
          block.append(" ")
          block.appendDecimal(position)
          block.append(" ")
          block.append(utf8: item)
          block.append("\n")
        }
      }
      items = (index, block)
      return block[...]
    }

    private func renderTail() {
      tail.removeAll(keepingCapacity: true)
      tail.appendText { tail in
        tail.append(" ")
        tail.appendDecimal(itemCount)
        tail.append(" ")
        tail.append(utf8: title)
        tail.append("\n")
      }
    }
  }

  private var pieces: ChunkedArray<Piece>

  init(_ sections: some Sequence<Section>) {
    pieces = ChunkedArray(sections.lazy.map(Piece.init))
  }

  /// Keeps the pieces in step with a change the model made (the changes of a batch one by one,
  /// in order); a reload needs a new instance.
  func apply(_ change: Change) {
    switch change {
    case .opened, .closed, .mode, .reloaded: break
    case .inserted(_, let index, let section): pieces.insert(Piece(section), at: index)
    case .deleted(_, let index, _, _): pieces.remove(at: index)
    case .moved(_, let from, let to, _): pieces.insert(pieces.remove(at: from), at: to)
    case .renamed(_, let index, _, let title, _):
      let piece = pieces[index]
      piece.update(title: title, itemCount: piece.itemCount)
    case .items(_, let index, _, _, let count, _):
      let piece = pieces[index]
      piece.update(title: piece.title, itemCount: count)
    }
  }

  func appendSectionLine(_ index: Int, open: Bool, to buffer: inout TextWriter) {
    pieces[index].appendLine(index, open: open, to: &buffer)
  }

  /// Every `item` line of the section at `index`, whose items are `items`, as a block to share.
  func items(_ index: Int, of items: [String]) -> ArraySlice<UInt8> {
    pieces[index].items(index, of: items)
  }

  /// The LIST reply's section lines, and for VIEW (`withItems`) the item lines of the open
  /// sections: the list walked in order, so that no line looks its section up (in the
  /// chunked lists, a search each).
  func appendList(
    _ sections: ChunkedArray<Section>, openedAt: ChunkedArray<UInt64?>, withItems: Bool,
    to buffer: inout [UInt8]
  ) {
    buffer.appendText { text in
      for (index, (piece, (section, openSince))) in zip(pieces, zip(sections, openedAt)).enumerated() {
        piece.appendLine(index, open: openSince != nil, to: &text)
        if withItems && openSince != nil { text.append(contentsOf: piece.items(index, of: section.items)) }
      }
    }
  }

  /// Appends the id of the section at `index`, a space before it, pre-rendered.
  @inline(__always)
  func appendID(_ index: Int, to buffer: inout TextWriter) {
    buffer.append(contentsOf: pieces[index].id)
  }

  /// The HELP reply.
  static let help: [UInt8] = {
    var buffer: [UInt8] = []
    for row in Grammar.rows { buffer.append(utf8: row.helpLine + "\n") }
    buffer.append("OK\n")
    return buffer
  }()
}
