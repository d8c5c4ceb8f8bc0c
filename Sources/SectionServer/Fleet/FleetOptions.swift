import Glibc
import Posix
import SectionShared

/// `--etcd` and its options: the list is shared by several hosts through etcd (docs/FLEET.md).
public struct EtcdOptions: Equatable {
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
  /// etcd's user and password when its auth is on: from `SECTIOND_ETCD_USER` and
  /// `SECTIOND_ETCD_PASSWORD`, else read at start from `credentialsFile` (`USER:PASSWORD`, as
  /// etcdctl's --user takes them): never the command line, which every local user can read.
  public var credentials: (user: String, password: String)?
  public var credentialsFile: String?

  public static func == (a: EtcdOptions, b: EtcdOptions) -> Bool {
    a.members == b.members && a.prefix == b.prefix && a.host == b.host && a.caFile == b.caFile
      && a.certificateFile == b.certificateFile && a.keyFile == b.keyFile
      && a.credentialsFile == b.credentialsFile
      && a.credentials?.user == b.credentials?.user && a.credentials?.password == b.credentials?.password
  }

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
      --etcd-credentials FILE  etcd's user and password, as USER:PASSWORD, when its auth is on
                               (default $CREDENTIALS_DIRECTORY/etcd when systemd's
                               LoadCredential= gives it; or $SECTIOND_ETCD_USER and
                               $SECTIOND_ETCD_PASSWORD)
    """

  /// The fleet's options from what the command line gave; nil without `--etcd`.
  static func make(
    etcd: String?, prefix: String?, host: String?, caFile: String?, certificateFile: String?,
    keyFile: String?,
    credentialsFile: String?, list: ListName?, environment: (String) -> String?
  ) throws(DaemonOptions.UsageError) -> EtcdOptions? {
    guard let etcd else {
      if prefix != nil || host != nil || caFile != nil || certificateFile != nil || keyFile != nil
        || credentialsFile != nil
      {
        throw DaemonOptions.UsageError(
          description:
            "--etcd-prefix, --host-name and the --etcd-* files need --etcd URL; see sectiond --help")
      }
      return nil
    }
    let members = etcd.split(separator: ",").map(String.init)
    for member in members {
      // Not echoed: it may hold a password, which the message would carry to the journal.
      let authority = member.drop(while: { $0 != "/" }).dropFirst(2).prefix(while: { $0 != "/" })
      if authority.contains("@") {
        throw DaemonOptions.UsageError(
          description:
            "--etcd: a member URL holds a user or password, which every local user can read in ps; give etcd's user and password in a file with --etcd-credentials FILE (USER:PASSWORD, mode 0600) or systemd's LoadCredential=etcd:FILE (docs/FLEET.md), and the members as http(s)://HOST:PORT"
        )
      }
      guard member.hasPrefix("http://") || member.hasPrefix("https://"),
        !member.utf8.contains(where: { $0 < 0x21 || $0 == 0x7F })
      else {
        throw DaemonOptions.UsageError(
          description:
            "--etcd: \"\(VisibleText.escape(member))\" is not an etcd client URL; give http://HOST:PORT or https://HOST:PORT"
        )
      }
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
    var options = EtcdOptions(
      members: members, prefix: prefix, host: host, caFile: caFile, certificateFile: certificateFile,
      keyFile: keyFile)
    if let user = environment("SECTIOND_ETCD_USER"), !user.isEmpty {
      guard let password = environment("SECTIOND_ETCD_PASSWORD") else {
        throw DaemonOptions.UsageError(
          description: "SECTIOND_ETCD_USER needs SECTIOND_ETCD_PASSWORD beside it")
      }
      options.credentials = (user, password)
    } else if let credentialsFile {
      options.credentialsFile = credentialsFile
    } else if let directory = environment("CREDENTIALS_DIRECTORY"), FileSystem.exists("\(directory)/etcd") {
      options.credentialsFile = "\(directory)/etcd"
    }
    return options
  }

  /// The user and password in `file` (`USER:PASSWORD` on its first line). A file other users
  /// may read or write is refused, as ssh refuses such a private key: the password would be
  /// theirs too (or theirs to replace).
  package static func credentials(in file: String) throws -> (user: String, password: String) {
    if let status = try FileSystem.status(file, followingLinks: true), status.mode & 0o077 != 0 {
      throw StartFailure(
        "\(file) is open to other users (mode \(String(status.mode & 0o777, radix: 8))) and holds etcd's password: make it the service user's alone (chmod 600 \(file)), or give it with systemd's LoadCredential="
      )
    }
    let text = String(decoding: try FileSystem.readFile(file, limit: 4096), as: UTF8.self)
    let line = text.split(separator: "\n", omittingEmptySubsequences: false).first ?? ""
    guard let colon = line.firstIndex(of: ":"), colon != line.startIndex else {
      throw StartFailure("\(file): give etcd's user and password as USER:PASSWORD on its first line")
    }
    return (String(line[..<colon]), String(line[line.index(after: colon)...]))
  }

  /// The machine's host name, its first label.
  private static func machineName() -> String {
    var buffer = [CChar](repeating: 0, count: 256)
    guard gethostname(&buffer, buffer.count - 1) == 0 else { return "host" }
    let bytes = buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }
    let name = String(decoding: bytes, as: UTF8.self).split(separator: ".").first.map(String.init) ?? "host"
    return ClientName.isValid(name) ? String(name.prefix(32)) : "host"
  }
}
