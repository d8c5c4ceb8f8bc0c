/// The name a connection gives itself with `CLIENT NAME`, which the daemon records with each
/// change it makes (`HISTORY`): 1 to 64 of `A-Z a-z 0-9 . _ : @ -`. The daemon's rule, the one
/// it checks `CLIENT NAME` and a handed-over name with, so that the library refuses locally
/// exactly what the daemon would.
public enum ClientName {
  /// The longest name `CLIENT NAME` takes, as Redis's CLIENT SETNAME takes any word: enough for
  /// `web:` and an IPv6 address with its port.
  public static let maximumLength = 64
  /// The rule, as every refusal states it.
  public static let rule =
    "a client's name is 1 to \(maximumLength) of the characters A-Z a-z 0-9 . _ : @ -, but not \"-\" alone, "
    + "which the history shows for a hidden name"

  /// The request line naming the connection; nil for a name the daemon would refuse.
  public static func line(_ name: String) -> String? {
    guard isValid(name) else { return nil }
    return "CLIENT NAME " + name
  }

  /// Whether the daemon accepts `name`.
  public static func isValid(_ name: String) -> Bool { isValid(name.utf8) }

  /// Whether `bytes` may be a client's name: a word (`isWord`) other than `-` alone, which is
  /// what the history shows for a name it hides (the read-only socket's lines): a client named
  /// so would read as hidden.
  public static func isValid(_ bytes: some Collection<UInt8>) -> Bool {
    isWord(bytes) && !bytes.elementsEqual("-".utf8)
  }

  /// Whether `bytes` is 1 to `maximumLength` of `A-Z a-z 0-9 . _ : @ -`, so that a name is one
  /// word of a history line and never a control sequence on a terminal. A handed-over name is
  /// held to this alone: a daemon before `-` was refused may hand over a client named so.
  public static func isWord(_ bytes: some Collection<UInt8>) -> Bool {
    (1...maximumLength).contains(bytes.count) && bytes.allSatisfy(isNameByte)
  }

  /// `bytes` as a name: any other byte becomes `_` (a process's `comm` may hold spaces and
  /// anything), and at most `maximumLength` of them.
  public static func asName(_ bytes: [UInt8]) -> [UInt8] {
    bytes.prefix(maximumLength).map { isNameByte($0) ? $0 : UInt8(ascii: "_") }
  }

  private static func isNameByte(_ byte: UInt8) -> Bool {
    switch byte {
    case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
      UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: ":"),
      UInt8(ascii: "@"), UInt8(ascii: "-"):
      true
    default: false
    }
  }
}
