/// Turns the bytes a terminal sends in raw mode into keys: UTF-8 characters, control keys,
/// CSI and SS3 sequences for cursor keys, and SGR mouse reports (`ESC [ < b ; x ; y M|m`).
///
/// A sequence cut between two reads waits for the rest. A lone ESC is ambiguous (the Esc key,
/// or the start of a sequence whose rest is late), so it waits too: the caller calls `flush()`
/// when no more bytes came within `escapeWaitMilliseconds`, which makes it the Esc key.
struct InputDecoder {
  static let escapeWaitMilliseconds = 30
  /// Bytes of an incomplete sequence or character, kept for the next read.
  private var pending: [UInt8] = []

  /// True while an incomplete sequence waits: the caller then wakes up for `flush()`.
  var isWaiting: Bool { !pending.isEmpty }

  mutating func feed(_ bytes: some Sequence<UInt8>) -> [Key] {
    pending += bytes
    var keys: [Key] = []
    var index = 0
    while index < pending.count {
      guard let (key, length) = InputDecoder.decode(pending[index...]) else { break }
      if let key { keys.append(key) }
      index += length
    }
    pending.removeFirst(index)
    return keys
  }

  /// What waited is taken as typed: a lone ESC is the Esc key; anything else incomplete is dropped.
  mutating func flush() -> [Key] {
    defer { pending = [] }
    return pending.first == 0x1B ? [.escape] : []
  }

  /// The key at the start of `bytes` and how many bytes it took (the key is nil for bytes that
  /// mean nothing here); nil when `bytes` holds only the start of a sequence.
  private static func decode(_ bytes: ArraySlice<UInt8>) -> (Key?, Int)? {
    let first = bytes[bytes.startIndex]
    switch first {
    case 0x1B: return escape(bytes)
    case 0x0D, 0x0A: return (.enter, 1)
    case 0x03: return (.interrupt, 1)
    case 0x7F, 0x08: return (.backspace, 1)
    case 0x01...0x1A: return (.control(Character(Unicode.Scalar(first + 0x40))), 1)
    case 0x20...0x7E: return (.character(Character(Unicode.Scalar(first))), 1)
    case 0xC2...0xF4: return utf8(bytes)
    default: return (nil, 1)
    }
  }

  /// A multi-byte UTF-8 character; a malformed one is skipped a byte at a time.
  private static func utf8(_ bytes: ArraySlice<UInt8>) -> (Key?, Int)? {
    let first = bytes[bytes.startIndex]
    let length = first >= 0xF0 ? 4 : first >= 0xE0 ? 3 : 2
    guard bytes.count >= length else { return nil }
    let encoded = bytes.prefix(length)
    guard encoded.dropFirst().allSatisfy({ $0 & 0xC0 == 0x80 }),
      let scalar = String(validating: encoded, as: UTF8.self)?.unicodeScalars.first
    else { return (nil, 1) }
    return (.character(Character(scalar)), length)
  }

  private static func escape(_ bytes: ArraySlice<UInt8>) -> (Key?, Int)? {
    let start = bytes.startIndex
    guard bytes.count >= 2 else { return nil }
    switch bytes[start + 1] {
    case UInt8(ascii: "["): return csi(bytes)
    case UInt8(ascii: "O"):
      guard bytes.count >= 3 else { return nil }
      return (cursorKey(final: bytes[start + 2]), 3)
    case 0x20...0x7E:
      // Alt+key, which the ui does not use: skipped, so that Alt+q does not quit by its ESC.
      return (nil, 2)
    default:
      // ESC before another control byte (Esc pressed twice): the Esc key.
      return (.escape, 1)
    }
  }

  /// `ESC [ params final`: parameter bytes 0x30-0x3F, then one final byte 0x40-0x7E.
  private static func csi(_ bytes: ArraySlice<UInt8>) -> (Key?, Int)? {
    let start = bytes.startIndex
    var index = start + 2
    while index < bytes.endIndex, (0x20...0x3F).contains(bytes[index]) { index += 1 }
    guard index < bytes.endIndex else { return nil }
    let final = bytes[index]
    let length = index + 1 - start
    let parameters = String(decoding: bytes[(start + 2)..<index], as: UTF8.self)
    if parameters.hasPrefix("<"), final == UInt8(ascii: "M") || final == UInt8(ascii: "m") {
      return (mouse(parameters.dropFirst(), released: final == UInt8(ascii: "m")), length)
    }
    if final == UInt8(ascii: "~") {
      let keys: [String: Key] = [
        "1": .home, "7": .home, "4": .end, "8": .end, "5": .pageUp, "6": .pageDown, "3": .delete,
      ]
      return (keys[String(parameters.prefix { $0 != ";" })], length)
    }
    return (cursorKey(final: final), length)
  }

  private static func cursorKey(final: UInt8) -> Key? {
    switch final {
    case UInt8(ascii: "A"): .up
    case UInt8(ascii: "B"): .down
    case UInt8(ascii: "C"): .right
    case UInt8(ascii: "D"): .left
    case UInt8(ascii: "H"): .home
    case UInt8(ascii: "F"): .end
    default: nil
    }
  }

  /// `b;x;y` of an SGR report; x and y count from 1. Bits 2-4 of b are modifiers, 32 motion, 64 the wheel.
  private static func mouse(_ parameters: Substring, released: Bool) -> Key? {
    let numbers = parameters.split(separator: ";").compactMap { Int($0) }
    guard numbers.count == 3, numbers[1] >= 1, numbers[2] >= 1 else { return nil }
    let code = numbers[0] & ~0b11100
    let action: MouseAction
    switch code {
    case 64: action = .wheelUp
    case 65: action = .wheelDown
    case 0...2: action = released ? .release : .press(button: code)
    default: return nil
    }
    return .mouse(action, row: numbers[2] - 1, column: numbers[1] - 1)
  }
}
