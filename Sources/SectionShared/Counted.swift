/// A count and its noun as a person writes them: "1 section", "3 sections", "0 items". Public,
/// so that a program words its counts as the daemon's messages and sectionctl do.
public func counted(_ count: Int, _ noun: String) -> String {
  count == 1 ? "1 \(noun)" : "\(count) \(noun)s"
}
