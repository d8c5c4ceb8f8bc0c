/// How sections open: each on its own, or as an accordion with at most one open.
public enum Mode: String, Sendable, CaseIterable {
  case multi
  case exclusive
}
