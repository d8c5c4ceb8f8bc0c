/// A line or two of protocol text being rendered into a byte array: the pieces (literals,
/// decimals, pre-rendered ids) are written into a small buffer on the stack and appended to
/// the array in one copy. Appending each piece to the array checks the array's uniqueness and
/// capacity again for every piece, and every digit of a decimal: a TOGGLE renders a reply, an
/// event and a journal line, six decimals and a dozen pieces, which cost it about 1,600
/// instructions that way (callgrind, docs/PERFORMANCE.md).
///
/// Only valid inside `Array.appendText`, which owns the scratch buffer and the array.
struct TextWriter {
  /// Bytes gathered before they are appended; a longer piece goes to the array directly.
  static let capacity = 256
  private let scratch: UnsafeMutablePointer<UInt8>
  private let target: UnsafeMutablePointer<[UInt8]>
  private var count = 0

  fileprivate init(scratch: UnsafeMutablePointer<UInt8>, target: UnsafeMutablePointer<[UInt8]>) {
    self.scratch = scratch
    self.target = target
  }

  @inline(__always)
  mutating func append(_ text: StaticString) {
    if text.utf8CodeUnitCount == 1 {
      append(text.utf8Start.pointee)
    } else {
      append(contentsOf: UnsafeBufferPointer(start: text.utf8Start, count: text.utf8CodeUnitCount))
    }
  }

  @inline(__always)
  mutating func append(contentsOf bytes: [UInt8]) {
    bytes.withUnsafeBufferPointer { append(contentsOf: $0) }
  }

  @inline(__always)
  mutating func append(contentsOf bytes: ArraySlice<UInt8>) {
    bytes.withUnsafeBufferPointer { append(contentsOf: $0) }
  }

  @inline(__always)
  mutating func append(utf8 text: String) {
    var text = text
    text.withUTF8 { append(contentsOf: $0) }
  }

  @inline(__always)
  mutating func append(_ byte: UInt8) {
    if count == TextWriter.capacity { flush() }
    scratch[count] = byte
    count += 1
  }

  /// Inlined: for a literal the copy below folds into a load and a store or two.
  @inline(__always)
  mutating func append(contentsOf bytes: UnsafeBufferPointer<UInt8>) {
    guard count + bytes.count <= TextWriter.capacity, let source = bytes.baseAddress else {
      appendDirectly(bytes)
      return
    }
    TextWriter.copy(source, bytes.count, to: scratch + count)
    count += bytes.count
  }

  /// A piece too long for the scratch buffer goes to the array after what was gathered.
  private mutating func appendDirectly(_ bytes: UnsafeBufferPointer<UInt8>) {
    flush()
    target.pointee.append(contentsOf: bytes)
  }

  /// Copies a piece of up to 16 bytes as two loads and two stores that overlap in the middle
  /// (touching no byte outside the piece), a longer one with memcpy: the pieces here are
  /// mostly a few bytes long, for which calling memcpy cost about 35 instructions each
  /// (callgrind).
  @inline(__always)
  private static func copy(
    _ source: UnsafePointer<UInt8>, _ count: Int, to destination: UnsafeMutablePointer<UInt8>
  ) {
    let from = UnsafeRawPointer(source)
    let to = UnsafeMutableRawPointer(destination)
    @inline(__always)
    func copyPair<T: FixedWidthInteger>(_: T.Type) {
      let (head, tail) = (
        from.loadUnaligned(as: T.self),
        from.loadUnaligned(fromByteOffset: count - MemoryLayout<T>.size, as: T.self)
      )
      to.storeBytes(of: head, as: T.self)
      to.storeBytes(of: tail, toByteOffset: count - MemoryLayout<T>.size, as: T.self)
    }
    switch count {
    case 8...16: copyPair(UInt64.self)
    case 4...7: copyPair(UInt32.self)
    case 2...3: copyPair(UInt16.self)
    case 1: destination.pointee = source.pointee
    case 0: break
    default: destination.update(from: source, count: count)
    }
  }

  /// `value` in decimal. Inlined for the one- and two-digit numbers indices mostly are.
  @inline(__always)
  mutating func appendDecimal(_ value: UInt64) {
    guard value < 100, count + 2 <= TextWriter.capacity else { return appendLongDecimal(value) }
    if value < 10 {
      scratch[count] = UInt8(ascii: "0") &+ UInt8(truncatingIfNeeded: value)
      count += 1
    } else {
      let pair = Int(truncatingIfNeeded: value) &* 2
      scratch[count] = TextWriter.digitPairs.utf8Start[pair]
      scratch[count + 1] = TextWriter.digitPairs.utf8Start[pair &+ 1]
      count += 2
    }
  }

  /// `value` in decimal, written backwards two digits at a time from a table of the pairs
  /// 00-99: half the divisions of digit by digit.
  private mutating func appendLongDecimal(_ value: UInt64) {
    if count + 20 > TextWriter.capacity { flush() }
    var digits = 1
    var bound: UInt64 = 10
    while digits < 20 && value >= bound {
      digits += 1
      bound &*= 10
    }
    let pairs = TextWriter.digitPairs.utf8Start
    var position = scratch + count + digits
    var rest = value
    while rest >= 100 {
      let pair = Int(truncatingIfNeeded: rest % 100) &* 2
      rest /= 100
      position -= 2
      position[0] = pairs[pair]
      position[1] = pairs[pair &+ 1]
    }
    if rest >= 10 {
      position[-2] = pairs[Int(truncatingIfNeeded: rest) &* 2]
      position[-1] = pairs[Int(truncatingIfNeeded: rest) &* 2 &+ 1]
    } else {
      position[-1] = UInt8(ascii: "0") &+ UInt8(truncatingIfNeeded: rest)
    }
    count += digits
  }

  private static let digitPairs: StaticString =
    "00010203040506070809101112131415161718192021222324252627282930313233343536373839404142434445464748495051525354555657585960616263646566676869707172737475767778798081828384858687888990919293949596979899"

  @inline(__always)
  mutating func appendDecimal(_ value: Int) { appendDecimal(UInt64(value)) }

  /// `<name><revision> <index>`, `name` with its space (one copy fewer): how a journal line
  /// and an event of a change begin.
  @inline(__always)
  mutating func appendChangeHead(_ name: StaticString, _ revision: UInt64, _ index: Int) {
    append(name)
    appendDecimal(revision)
    append(" ")
    appendDecimal(index)
  }

  /// A space and `text`: a further word of a journal line or an event.
  mutating func appendWord(_ text: String) {
    append(" ")
    append(utf8: text)
  }

  /// A space and `value`: a further number of a journal line or an event.
  @inline(__always)
  mutating func appendNumber(_ value: Int) {
    append(" ")
    appendDecimal(value)
  }

  /// Appends what was gathered to the array.
  fileprivate mutating func flush() {
    guard count > 0 else { return }
    target.pointee.append(contentsOf: UnsafeBufferPointer(start: scratch, count: count))
    count = 0
  }
}

extension Array where Element == UInt8 {
  /// Appends what `render` writes, gathered on the stack and copied here in one go (see
  /// `TextWriter`).
  @inline(__always)
  mutating func appendText(_ render: (inout TextWriter) -> Void) {
    withUnsafeTemporaryAllocation(of: UInt8.self, capacity: TextWriter.capacity) { scratch in
      withUnsafeMutablePointer(to: &self) { target in
        var writer = TextWriter(scratch: scratch.baseAddress!, target: target)
        render(&writer)
        writer.flush()
      }
    }
  }
}
