/// Text from outside the process as data a person can read: nothing in it may act on the terminal or
/// hide itself. Every byte sectionctl prints that came from the daemon (titles, ids, items,
/// error messages, whole lines) passes through here first, whatever the command; a fake
/// server or a daemon bug can then at worst print odd characters, never set the window
/// title, write the clipboard (OSC 52) or move the cursor over other lines. The daemon's
/// `ERR` messages, and the etcd errors it shows in STATUS and logs, pass through it too.
public enum VisibleText {
  /// `bytes` as text, each byte that is not part of valid UTF-8 written `\xHH` (as Python's
  /// repr does), so that a person sees which bytes were wrong instead of U+FFFD.
  public static func decode(_ bytes: some Collection<UInt8>) -> String {
    if let text = bytes.withContiguousStorageIfAvailable(ascii) ?? nil { return text }
    if let text = String(validating: bytes, as: UTF8.self) { return text }
    var text = ""
    var rest = bytes[...]
    while let lead = rest.first {
      if lead < 0x80 {
        text.unicodeScalars.append(Unicode.Scalar(lead))
        rest = rest.dropFirst()
        continue
      }
      let length = sequenceLength(lead)
      if length > 1, rest.count >= length,
        let character = String(validating: rest.prefix(length), as: UTF8.self)
      {
        text += character
        rest = rest.dropFirst(length)
      } else {
        text += hex(UInt32(lead), prefix: "\\x", digits: 2)
        rest = rest.dropFirst()
      }
    }
    return text
  }

  /// `bytes` as a String if they are all ASCII, as nearly everything the daemon sends is: a
  /// check and a copy, without the generic validation (a third of reading a reply, by callgrind).
  private static func ascii(_ bytes: UnsafeBufferPointer<UInt8>) -> String? {
    isASCII(bytes) ? String(decoding: bytes, as: UTF8.self) : nil
  }

  /// Eight bytes at a time: a line of tens of megabytes is checked in milliseconds, even in a
  /// debug build, where a loop of a closure per byte took seconds.
  private static func isASCII(_ bytes: UnsafeBufferPointer<UInt8>) -> Bool {
    guard let base = bytes.baseAddress else { return true }
    let raw = UnsafeRawPointer(base)
    var offset = 0
    while offset + 8 <= bytes.count {
      if raw.loadUnaligned(fromByteOffset: offset, as: UInt64.self) & 0x8080_8080_8080_8080 != 0 {
        return false
      }
      offset += 8
    }
    while offset < bytes.count {
      if bytes[offset] >= 0x80 { return false }
      offset += 1
    }
    return true
  }

  /// `text` with every character a terminal would act on or not show written as an escape:
  /// C0 controls (tab and LF too), DEL and C1 controls as `\xHH`; line and paragraph
  /// separators and the invisible format characters (zero-width space, direction marks and
  /// overrides, U+FEFF, tag characters) as `\uHHHH` or `\UHHHHHHHH`. With `asciiOnly`,
  /// everything past ASCII too: for a terminal whose locale is not UTF-8.
  public static func escape(_ text: String, asciiOnly: Bool = false) -> String {
    guard !isPrintableASCII(text),
      text.unicodeScalars.contains(where: { needsEscape($0, asciiOnly: asciiOnly) })
    else { return text }
    var escaped = ""
    for scalar in text.unicodeScalars {
      if !needsEscape(scalar, asciiOnly: asciiOnly) {
        escaped.unicodeScalars.append(scalar)
      } else if scalar.value < 0xA0 {
        escaped += hex(scalar.value, prefix: "\\x", digits: 2)
      } else if scalar.value <= 0xFFFF {
        escaped += hex(scalar.value, prefix: "\\u", digits: 4)
      } else {
        escaped += hex(scalar.value, prefix: "\\U", digits: 8)
      }
    }
    return escaped
  }

  /// `text` as one printable line of at most `limit` characters, escaped as `escape` does
  /// (a CR LF, one Character in Swift, as `\x0d\x0a`), the rest cut with `...`: for text from
  /// outside the process (an etcd member's error, libcurl's) that a reply, STATUS or the log
  /// shows, where a line break would forge a line of the protocol or of the journal.
  public static func line(_ text: String, limit: Int = 300) -> String {
    let escaped = escape(text)
    guard escaped.count > limit else { return escaped }
    return escaped.prefix(limit) + "..."
  }

  /// `text` escaped line by line, its LFs kept: for sectionctl's own messages, which quote
  /// what the daemon said inside sentences of several lines.
  public static func escapeLines(_ text: String) -> String {
    text.split(separator: "\n", omittingEmptySubsequences: false).map { escape(String($0)) }
      .joined(separator: "\n")
  }

  /// A JSON document with DEL, C1 controls and the characters `escape` shows written as
  /// `\uHHHH` (a pair of them past U+FFFF), as RFC 8259 allows: the serializer escapes only
  /// what JSON requires (C0), and `jq -r` or a log viewer would otherwise pass an 8-bit CSI
  /// (U+009B) or a bidi override to a terminal. Lossless: a JSON reader gets the same text.
  /// A pretty-printed document (`export`) keeps its line breaks.
  public static func escape(json serialized: String) -> String {
    // Below DEL nothing: the serializer has escaped C0 in strings, so what is left is the
    // document's own whitespace (a pretty-printed one has LFs).
    func needsEscape(_ scalar: Unicode.Scalar) -> Bool {
      scalar.value >= 0x7F && VisibleText.needsEscape(scalar, asciiOnly: false)
    }
    guard serialized.utf8.contains(where: { $0 >= 0x7F }),
      serialized.unicodeScalars.contains(where: needsEscape)
    else { return serialized }
    var escaped = ""
    for scalar in serialized.unicodeScalars {
      if needsEscape(scalar) {
        for unit in String(scalar).utf16 { escaped += hex(UInt32(unit), prefix: "\\u", digits: 4) }
      } else {
        escaped.unicodeScalars.append(scalar)
      }
    }
    return escaped
  }

  /// True when every byte is printable ASCII: most text, checked a byte at a time rather than
  /// a scalar at a time (a 20 MB `state` line in a few milliseconds).
  private static func isPrintableASCII(_ text: String) -> Bool {
    var text = text
    return text.withUTF8 { bytes in
      var all: UInt8 = 0
      for byte in bytes { all |= (byte &- 0x20) | (byte &+ 1) & 0x80 }
      return all & 0x80 == 0
    }
  }

  /// Characters shown as escapes. Format characters (Cf) are invisible by design, and the
  /// bidirectional ones reorder the text around them (Trojan Source); only the joiners, which
  /// emoji and Indic scripts need, and the soft hyphen, which terminals draw, are left as they are.
  private static func needsEscape(_ scalar: Unicode.Scalar, asciiOnly: Bool) -> Bool {
    let value = scalar.value
    if value < 0x20 || (0x7F..<0xA0).contains(value) { return true }
    if value < 0x7F { return false }
    if asciiOnly { return true }
    switch scalar.properties.generalCategory {
    case .lineSeparator, .paragraphSeparator: return true
    case .format: return value != 0x200C && value != 0x200D && value != 0xAD
    default: return false
    }
  }

  /// How many bytes a UTF-8 sequence starting with the non-ASCII `lead` claims to take (1 for a stray byte).
  private static func sequenceLength(_ lead: UInt8) -> Int {
    switch lead {
    case 0xC2...0xDF: 2
    case 0xE0...0xEF: 3
    case 0xF0...0xF4: 4
    default: 1
    }
  }

  private static func hex(_ value: UInt32, prefix: String, digits: Int) -> String {
    let text = String(value, radix: 16)
    return prefix + String(repeating: "0", count: max(digits - text.count, 0)) + text
  }
}
