/// An ordered list stored as a run of chunks of at most `chunkLimit` elements, so that an
/// insert or a delete anywhere moves the elements of one chunk instead of every element after
/// it.
///
/// The list of sections is one: with a plain array, `INSERT 0` moved every section, its open
/// state and its rendered pieces, and cost 4.3 µs of the daemon's CPU with 1,000 sections and
/// 12 µs with 9,900. Reading an element finds its chunk by a binary search of the chunks'
/// ends, a few steps even at the section limit; walking the list goes chunk by chunk.
/// A value type, copied on write like an array: a copy shares the chunks until one changes.
public struct ChunkedArray<Element> {
  private var chunks: [[Element]] = []
  /// For each chunk, how many elements it and the chunks before it hold.
  private var ends: [Int] = []

  /// A chunk that grows past this is split in two; one that shrinks below a quarter of it is
  /// merged with a neighbour when the two fit in one.
  static var chunkLimit: Int { 256 }

  public init() {}

  /// The elements of `elements`, in chunks half full, so that inserts do not split them at once.
  public init(_ elements: some Sequence<Element>) {
    var chunk: [Element] = []
    for element in elements {
      chunk.append(element)
      if chunk.count == Self.chunkLimit / 2 {
        appendChunk(chunk)
        chunk = []
      }
    }
    if !chunk.isEmpty { appendChunk(chunk) }
  }

  private mutating func appendChunk(_ chunk: [Element]) {
    ends.append((ends.last ?? 0) + chunk.count)
    chunks.append(chunk)
  }

  /// The chunk that holds the element at `position`, and where in it.
  private func locate(_ position: Int) -> (chunk: Int, offset: Int) {
    precondition(position >= 0 && position < count, "index \(position) out of range 0..<\(count)")
    var low = 0
    var high = ends.count - 1
    while low < high {
      let middle = (low + high) / 2
      if ends[middle] > position { high = middle } else { low = middle + 1 }
    }
    return (low, low == 0 ? position : position - ends[low - 1])
  }

  public mutating func insert(_ element: Element, at position: Int) {
    precondition(position >= 0 && position <= count, "index \(position) out of range 0...\(count)")
    guard !chunks.isEmpty else {
      appendChunk([element])
      return
    }
    let (chunk, offset) =
      position == count ? (chunks.count - 1, chunks[chunks.count - 1].count) : locate(position)
    chunks[chunk].insert(element, at: offset)
    for later in chunk..<ends.count { ends[later] += 1 }
    if chunks[chunk].count > Self.chunkLimit { split(chunk) }
  }

  @discardableResult
  public mutating func remove(at position: Int) -> Element {
    let (chunk, offset) = locate(position)
    let element = chunks[chunk].remove(at: offset)
    for later in chunk..<ends.count { ends[later] -= 1 }
    if chunks[chunk].isEmpty {
      chunks.remove(at: chunk)
      ends.remove(at: chunk)
    } else if chunks[chunk].count < Self.chunkLimit / 4 {
      mergeIfSmall(chunk)
    }
    return element
  }

  private mutating func split(_ chunk: Int) {
    let half = chunks[chunk].count / 2
    let tail = Array(chunks[chunk][half...])
    chunks[chunk].removeSubrange(half...)
    chunks.insert(tail, at: chunk + 1)
    ends.insert(ends[chunk], at: chunk + 1)
    ends[chunk] -= tail.count
  }

  /// Merges a small chunk into its next neighbour, or its previous one, when they fit in one.
  private mutating func mergeIfSmall(_ chunk: Int) {
    for (first, second) in [(chunk, chunk + 1), (chunk - 1, chunk)]
    where first >= 0 && second < chunks.count
      && chunks[first].count + chunks[second].count <= Self.chunkLimit
    {
      let moved = chunks.remove(at: second)
      chunks[first].append(contentsOf: moved)
      ends.remove(at: first)
      return
    }
  }

  /// The positions of the elements that satisfy `predicate`, found chunk by chunk.
  public func positions(where predicate: (Element) throws -> Bool) rethrows -> [Int] {
    var found: [Int] = []
    var start = 0
    for chunk in chunks {
      for offset in chunk.indices where try predicate(chunk[offset]) { found.append(start + offset) }
      start += chunk.count
    }
    return found
  }

  /// The position of the first element that satisfies `predicate`, found chunk by chunk.
  public func firstIndex(where predicate: (Element) throws -> Bool) rethrows -> Int? {
    var start = 0
    for chunk in chunks {
      if let offset = try chunk.firstIndex(where: predicate) { return start + offset }
      start += chunk.count
    }
    return nil
  }
}

extension ChunkedArray: RandomAccessCollection, MutableCollection {
  public typealias Index = Int
  public typealias Indices = Range<Int>

  public var startIndex: Int { 0 }
  public var endIndex: Int { ends.last ?? 0 }
  public var count: Int { ends.last ?? 0 }

  public subscript(position: Int) -> Element {
    get {
      let (chunk, offset) = locate(position)
      return chunks[chunk][offset]
    }
    // In place: changing an element must not copy its chunk (or, for a section, its items).
    _modify {
      let (chunk, offset) = locate(position)
      yield &chunks[chunk][offset]
    }
  }

  /// Walks the chunks in turn, without a search per element.
  public struct Iterator: IteratorProtocol {
    fileprivate var chunks: IndexingIterator<[[Element]]>
    fileprivate var current: IndexingIterator<[Element]>?

    public mutating func next() -> Element? {
      while true {
        if let element = current?.next() { return element }
        guard let chunk = chunks.next() else { return nil }
        current = chunk.makeIterator()
      }
    }
  }

  public func makeIterator() -> Iterator { Iterator(chunks: chunks.makeIterator(), current: nil) }
}

extension ChunkedArray: ExpressibleByArrayLiteral {
  public init(arrayLiteral elements: Element...) { self.init(elements) }
}

extension ChunkedArray: Equatable where Element: Equatable {
  /// Equal when the elements are, however they are chunked.
  public static func == (lhs: ChunkedArray, rhs: ChunkedArray) -> Bool {
    lhs.count == rhs.count && lhs.elementsEqual(rhs)
  }
}

extension ChunkedArray: Sendable where Element: Sendable {}
