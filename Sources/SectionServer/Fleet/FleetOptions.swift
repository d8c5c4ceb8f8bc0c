import Glibc
import SectionShared

/// `--etcd` and its options: the list is shared by several hosts through etcd (docs/FLEET.md).
public struct FleetOptions: Equatable {
  /// The members' client URLs, tried in order.
  public var members: [String]
  /// Every key the fleet keeps is under it (`/sectiond/LIST/`).
  public var prefix: String
  /// The name this host's changes carry in the history (`name@host`): one word.
  public var host: String
  /// For `https://` members: the CA that signed them, and this host's certificate and key when
  /// the members ask for one.
  public var caFile: String?
  public var certificateFile: String?
  public var keyFile: String?

  public static let usage = """
      --etcd URL[,URL...]      share the list with other hosts through etcd (docs/FLEET.md):
                               the members' client URLs, http:// or https://
      --etcd-prefix KEY        where in etcd the list lives (default /sectiond/LIST/, LIST the
                               --list name or default)
      --host-name NAME         this host in the history, shown as name@NAME (default the
                               machine's host name)
      --etcd-cacert FILE       the CA that signed the members' certificates (https://)
      --etcd-cert FILE         this host's certificate, when the members ask for one
      --etcd-key FILE          its key
    """

  /// The fleet's options from what the command line gave; nil without `--etcd`.
  static func make(
    etcd: String?, prefix: String?, host: String?, caFile: String?, certificateFile: String?,
    keyFile: String?,
    list: ListName?
  ) throws(DaemonOptions.UsageError) -> FleetOptions? {
    guard let etcd else {
      if prefix != nil || host != nil || caFile != nil || certificateFile != nil || keyFile != nil {
        throw DaemonOptions.UsageError(
          description:
            "--etcd-prefix, --host-name and the --etcd-* files need --etcd URL; see sectiond --help")
      }
      return nil
    }
    let members = etcd.split(separator: ",").map(String.init)
    for member in members where !(member.hasPrefix("http://") || member.hasPrefix("https://")) {
      throw DaemonOptions.UsageError(
        description:
          "--etcd: \"\(member)\" is not an etcd client URL; give http://HOST:PORT or https://HOST:PORT")
    }
    guard !members.isEmpty else {
      throw DaemonOptions.UsageError(description: "--etcd needs at least one member URL")
    }
    if members.contains(where: { $0.hasPrefix("https://") }) && caFile == nil {
      throw DaemonOptions.UsageError(
        description: "--etcd with https:// members needs --etcd-cacert FILE, the CA that signed them")
    }
    if (certificateFile == nil) != (keyFile == nil) {
      throw DaemonOptions.UsageError(description: "--etcd-cert and --etcd-key go together; give both")
    }
    let prefix = prefix ?? "/sectiond/\(list?.rawValue ?? "default")/"
    guard prefix.hasSuffix("/"), !prefix.utf8.contains(where: { $0 < 0x21 || $0 == 0x7F }) else {
      throw DaemonOptions.UsageError(
        description:
          "--etcd-prefix \"\(prefix)\": give a key ending in / with no spaces or control characters")
    }
    let host = host ?? Self.machineName()
    guard ClientName.isValid(host), host.utf8.count <= 32, !host.contains("@") else {
      throw DaemonOptions.UsageError(
        description:
          "--host-name \"\(host)\": give one word of at most 32 letters, digits, . _ : - (it is shown as name@HOST in the history)"
      )
    }
    return FleetOptions(
      members: members, prefix: prefix, host: host, caFile: caFile, certificateFile: certificateFile,
      keyFile: keyFile)
  }

  /// The machine's host name, its first label.
  private static func machineName() -> String {
    var buffer = [CChar](repeating: 0, count: 256)
    guard gethostname(&buffer, buffer.count - 1) == 0 else { return "host" }
    let name = String(cString: buffer).split(separator: ".").first.map(String.init) ?? "host"
    return ClientName.isValid(name) ? String(name.prefix(32)) : "host"
  }
}
