/// The name a connection gives itself with `CLIENT NAME`, which the daemon records with each
/// change it makes (`HISTORY`): 1 to 64 of `A-Z a-z 0-9 . _ : @ -`, as the daemon accepts.
public enum ClientName {
  /// The request line naming the connection; nil for a name the daemon would refuse.
  public static func line(_ name: String) -> String? {
    guard isValid(name) else { return nil }
    return "CLIENT NAME " + name
  }

  /// Whether the daemon accepts `name`.
  public static func isValid(_ name: String) -> Bool {
    (1...64).contains(name.utf8.count)
      && name.utf8.allSatisfy { byte in
        switch byte {
        case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"),
          UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: ":"),
          UInt8(ascii: "@"), UInt8(ascii: "-"):
          true
        default: false
        }
      }
  }
}
