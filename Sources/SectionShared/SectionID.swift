/// The rule for a section's id, which the daemon holds its config and `INSERT` to and
/// sectionctl's completion offers ids by (`Section.idProblem`). Public, so that a program can
/// check an id before `INSERT` sends it, and trust only a valid id from a daemon it does not know.
public enum SectionID {
  /// Why `id` cannot be a section's id; nil when it can. Ids travel in space-separated protocol
  /// lines and comma-separated lists, so they are restricted to characters that can never
  /// split them.
  public static func problem(_ id: String) -> String? {
    if id.isEmpty { return "is empty; give the section an \"id\" of letters and digits" }
    if id.utf8.allSatisfy({ (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) }) {
      return "\"\(id)\" is all digits, which would read as an index; add a letter"
    }
    if id.lowercased() == "all" { return "\"all\" is reserved for OPEN ALL and CLOSE ALL; choose another" }
    let allowed = id.utf8.allSatisfy { byte in
      (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(byte)
        || (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(byte)
        || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) || byte == UInt8(ascii: "-")
        || byte == UInt8(ascii: "_") || byte == UInt8(ascii: ".")
    }
    if !allowed {
      return "\"\(id)\" may contain only the ASCII letters a-z and A-Z, digits, '-', '_' and '.'"
    }
    return nil
  }
}
