/// What `send` needs to know of a raw line to read its replies right.
public enum SendLine {
  /// The line's first word, upper-cased as the daemon compares verbs; "" for a blank line.
  public static func verb(_ line: String) -> String {
    line.split(whereSeparator: { $0 == " " || $0 == "\t" }).first.map { $0.uppercased() } ?? ""
  }
}
