/// A count and its noun as a person writes them: "1 section", "3 sections", "0 items".
package func counted(_ count: Int, _ noun: String) -> String {
  count == 1 ? "1 \(noun)" : "\(count) \(noun)s"
}
