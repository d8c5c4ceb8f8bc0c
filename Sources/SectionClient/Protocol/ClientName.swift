import SectionCore

/// The name a connection gives itself with `CLIENT NAME`, which the daemon records with each
/// change it makes (`HISTORY`): 1 to 64 of `A-Z a-z 0-9 . _ : @ -`, by the daemon's own rule
/// (`Author.isName`).
public enum ClientName {
  /// The request line naming the connection; nil for a name the daemon would refuse.
  public static func line(_ name: String) -> String? {
    guard isValid(name) else { return nil }
    return "CLIENT NAME " + name
  }

  /// Whether the daemon accepts `name`.
  public static func isValid(_ name: String) -> Bool { Author.isName(name.utf8) }
}
