/// How the read-only socket's default path follows from the control socket's, the same for
/// sectiond (where it binds) and sectionctl (where `--readonly` looks), so that two daemons
/// with sockets in one directory never share a read-only socket, and a viewer never reads
/// another daemon than the one named.
public enum SocketNames {
  public static let control = "control.sock"
  public static let readonly = "readonly.sock"

  /// `readonly.sock` beside a control socket named `control.sock` (the installed layout);
  /// otherwise the control socket's name with `.readonly` before its `.sock`, or after a name
  /// without one: `/tmp/a.sock` gives `/tmp/a.readonly.sock`, `/tmp/a` gives `/tmp/a.readonly`.
  public static func readonlyPath(forControl path: String) -> String {
    let slash = path.lastIndex(of: "/")
    let directory = slash.map { String(path[...$0]) } ?? ""
    let name = slash.map { String(path[path.index(after: $0)...]) } ?? path
    if name == control { return directory + readonly }
    if name.hasSuffix(".sock") && name.count > ".sock".count {
      return directory + name.dropLast(".sock".count) + ".readonly.sock"
    }
    return directory + name + ".readonly"
  }

  /// The socket of the list `list` in the family of the socket at `path`: a socket of the same
  /// name in the directory NAME beside it, where `sectiond --list NAME` and `sectiond@NAME` put
  /// a named list's beside the unnamed list's (`/run/sectiond/control.sock` gives
  /// `/run/sectiond/NAME/control.sock`). So a socket named by `$SECTIOND_SOCKET` (`make run`'s)
  /// names its named lists too.
  public static func path(of list: ListName, beside path: String) -> String {
    let slash = path.lastIndex(of: "/")
    let directory = slash.map { String(path[...$0]) } ?? ""
    let name = slash.map { String(path[path.index(after: $0)...]) } ?? path
    return "\(directory)\(list)/\(name)"
  }
}
