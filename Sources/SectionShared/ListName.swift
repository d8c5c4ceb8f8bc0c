/// The name of one of several lists on a machine (`sectiond@NAME`, `sectiond --list NAME`,
/// `sectionctl -l NAME`). It becomes a directory (`/run/sectiond/NAME/`), a file name
/// (`/etc/sectiond/NAME.json`), a unit's instance and a D-Bus name element, so it is held to
/// what all four accept unescaped: lower-case letters, digits, `_` and `-`, starting with a
/// letter (no `.`, `/` or `..`; a digit cannot start a bus name element), at most 32
/// characters (readable in `sectionctl lists`, and a socket path under
/// `/run/user/UID/sectiond/NAME/` stays well inside 108 bytes).
public struct ListName: Equatable, Hashable, Sendable, CustomStringConvertible {
  public let rawValue: String

  public static let maximumLength = 32
  /// The rule, as every refusal states it.
  public static let rule =
    "a list name is 1 to 32 characters of a-z, 0-9, _ and -, starting with a letter"

  /// A name that breaks the rule; the description names the rule.
  public struct Invalid: Error, CustomStringConvertible {
    public let name: String
    public var description: String { "invalid list name \"\(VisibleName.of(name))\": \(ListName.rule)" }
  }

  public init(validating name: String) throws(Invalid) {
    let bytes = name.utf8
    guard (1...ListName.maximumLength).contains(bytes.count),
      let first = bytes.first, (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(first),
      bytes.allSatisfy(ListName.allowed)
    else { throw Invalid(name: name) }
    rawValue = name
  }

  public var description: String { rawValue }

  /// The element of the bus name `org.sectiond.Sectiond1.NAME`: the name itself. Bus name
  /// elements take `a-z`, `0-9`, `_` and `-` (the D-Bus specification, "Valid Bus Names"; only
  /// interface names refuse `-`), so every list name is one as it is, and two lists never
  /// share a bus name. (An earlier mapping wrote `-` as `_`, which gave `a-b` and `a_b` one
  /// name: the second list waited for it and took the first's calls after its restart.)
  public var busElement: String { rawValue }

  private static func allowed(_ byte: UInt8) -> Bool {
    (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(byte)
      || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte)
      || byte == UInt8(ascii: "_") || byte == UInt8(ascii: "-")
  }
}

/// A name as a message shows it: control characters as `?`, at most `limit` characters (and
/// `...` after), so that a refusal of a hostile name stays one readable line.
package enum VisibleName {
  package static func of(_ name: String, limit: Int = 40) -> String {
    let scalars = name.unicodeScalars.prefix(limit).map { $0.value < 0x20 || $0.value == 0x7F ? "?" : $0 }
    return String(String.UnicodeScalarView(scalars)) + (name.unicodeScalars.count > limit ? "..." : "")
  }
}
