/// Where the daemon's socket is, found the same way the daemon decides where to put it.
enum SocketLocation {
  static let systemPath = "/run/sectiond/control.sock"
  static let readonlyName = "readonly.sock"

  /// `--socket`, else `$SECTIOND_SOCKET`, else the system socket for root, else the user's runtime
  /// directory (`/tmp/sectiond-UID` without one, as the daemon does); with `readonly`, the
  /// `--readonly-socket` given, else `readonly.sock` in the same directory.
  static func resolve(
    explicit: String?, readonly: Bool, explicitReadonly: String? = nil, environment: Environment
  ) -> String {
    if readonly, let explicitReadonly { return explicitReadonly }
    let control: String
    if let explicit {
      control = explicit
    } else if let fromEnvironment = environment.nonEmpty("SECTIOND_SOCKET") {
      control = fromEnvironment
    } else if environment.userID == 0 {
      control = systemPath
    } else {
      let runtime = environment.nonEmpty("XDG_RUNTIME_DIR").map { $0 + "/sectiond" }
      control = (runtime ?? "/tmp/sectiond-\(environment.userID)") + "/control.sock"
    }
    return readonly ? sibling(of: control, named: readonlyName) : control
  }

  /// `name` in the directory that holds `path`.
  private static func sibling(of path: String, named name: String) -> String {
    guard let slash = path.lastIndex(of: "/") else { return name }
    return String(path[...slash]) + name
  }
}
