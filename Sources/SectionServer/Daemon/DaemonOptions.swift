import Posix
import SectionCore
import Systemd

/// The daemon's command line, with the defaults the environment implies.
public struct DaemonOptions: Equatable {
  public var configPath: String?
  /// The config path was given on the command line, so it must exist.
  public var configRequired = false
  /// The access rules (`AccessRules`): who on the control socket may do what; nil: none, every
  /// connection of the control socket may do everything. The default path is read when it
  /// exists, at start and at each reload (an administrator creates or removes it, then
  /// reloads); a path given with `--access` must exist.
  public var accessPath: String?
  public var accessRequired = false
  public var socketPath: String
  public var readOnlySocketPath: String?
  public var statePath: String?
  public var maxClients = 1024
  /// At most this many of the clients on the read-only socket; nil: all but a sixteenth.
  public var maxReadOnlyClients: Int?
  /// FileDescriptorStoreMax= of the unit: how many descriptors systemd keeps for the daemon
  /// across restarts. 0: connections are not kept.
  public var fdStore = 0
  public var checkConfigOnly = false
  public var allowInsecure = false
  /// When the state is fsynced: what a power cut may take (see `FsyncPolicy`).
  public var fsync = FsyncPolicy.everySecond
  public var verbose = false
  /// How far clients may grow the list with runtime edits.
  public var editLimits = EditLimits()
  /// How many of the last changes the history keeps (`HISTORY`, `SUBSCRIBE FROM`); 0: none.
  public var history = 1000
  /// The most `--history` takes: the history's ring of records is allocated whole.
  public static let historyLimit = 100_000
  /// Each saved group as a structured journal entry (`ChangeLog`).
  public var logChanges = false
  /// The D-Bus bus to serve `org.sectiond.Sectiond1` on (docs/DBUS.md); nil: none.
  public var bus: Bus.Kind?
  /// `--list NAME`: one of several lists on the machine, whose default paths and bus name
  /// follow from its name; nil: the unnamed list, at the paths it has always had.
  public var list: ListName?
  /// The user's own daemons' directory (`$XDG_RUNTIME_DIR/sectiond`, `/tmp/sectiond-UID`) when
  /// the socket is there by default: it must be the user's own as it stands
  /// (`SocketDirectory.ownDirectoryProblem`), as sectionctl requires of it. Nil for root and
  /// for a socket named (`--socket`, `$SECTIOND_SOCKET`).
  public var ownSocketDirectory: String?
  /// `--etcd`: the list is shared with other hosts through etcd; nil: this host's alone.
  public var etcd: EtcdOptions?

  /// The D-Bus name this daemon owns: `org.sectiond.Sectiond1`, or for a named list
  /// `org.sectiond.Sectiond1.NAME`, as MPRIS names its players (docs/DBUS.md, "Several lists").
  public var busName: String {
    "org.sectiond.Sectiond1" + (list.map { ".\($0.busElement)" } ?? "")
  }

  public static let usage = """
    usage: sectiond [options]

    Serves the open/closed state of a list of sections on a Unix socket (protocol 1).

    options:
      --list NAME              serve the list NAME, one of several on the machine (as the unit
                               sectiond@NAME does; default $SECTIOND_LIST, as for sectionctl):
                               every default below gains NAME, so the
                               sockets are in a directory NAME beside the unnamed list's, the
                               config is NAME.json instead of sections.json, the state is in
                               NAME/, and the bus name is org.sectiond.Sectiond1.NAME;
                               options given explicitly still win. NAME is 1 to 32
                               characters of a-z, 0-9, _ and -, starting with a letter
      --config FILE            sections to serve (default, if it exists: $CONFIGURATION_DIRECTORY/
                               sections.json under systemd, /etc/sectiond/sections.json for root,
                               else $XDG_CONFIG_HOME/sectiond/sections.json; else a built-in demo set)
      --access FILE            access rules: which users and groups connecting to the control
                               socket may read, operate (open and close) or edit (default, if
                               it exists: access.conf beside the default config, which every
                               list of that directory shares; without rules the control
                               socket allows everything, as its mode lets in)
      --socket PATH            control socket (default $SECTIOND_SOCKET, with --list NAME
                               the socket of its name in the directory NAME beside it;
                               /run/sectiond/control.sock for root, else
                               $XDG_RUNTIME_DIR/sectiond/control.sock, or
                               /tmp/sectiond-UID/control.sock without XDG_RUNTIME_DIR)
      --readonly-socket PATH   read-only socket, mode 0666 (default readonly.sock beside a control
                               socket named control.sock, else the control socket's name with
                               .readonly before its .sock: /tmp/a.sock gives /tmp/a.readonly.sock)
      --state FILE             state file (default $STATE_DIRECTORY/state.json under systemd,
                               /var/lib/sectiond/state.json for root, else $XDG_STATE_HOME/sectiond/state.json)
      --no-state               keep state in memory only
      --fsync always|everysec|no
                               when the state is fsynced: before each change is acknowledged
                               (a power cut loses nothing acknowledged), at most a second after
                               it in the background (the default: a power cut loses at most the
                               last second or so), or never (tmpfs, tests: a power cut may lose
                               anything); a crash of sectiond alone loses nothing acknowledged
      --sync                   the same as --fsync always
      --max-clients N          most connections at once (default 1024)
      --max-readonly-clients N most of them on the read-only socket (default: all but a
                               sixteenth of --max-clients, which stay free for the control socket)
      --fd-store N             under systemd, keep up to N-1 connections in the file descriptor
                               store so that they survive restarts and crashes; N must be the
                               unit's FileDescriptorStoreMax= (default 0: none)
      --max-sections N         most sections clients may grow the list to (default 10000)
      --max-section-items N    most items in one section (default 10000)
      --max-items N            most items in all sections together (default 1000000)
      --max-batch-lines N      most lines in one BATCH (default 10000)
      --max-text-bytes N       most bytes of ids, titles and items in the whole list, which
                               bounds the state file and the time a start takes to read it
                               (default 16777216: 16 MiB)
      --max-request-changes N  most changes one request may make, a BATCH's lines and each
                               section OPEN ALL opens counted; bounds one loop turn (default
                               100000; at least --max-sections + 1)
      --history N              keep the last N changes with who made them and when, for HISTORY
                               and SUBSCRIBE FROM, in the state (default 1000, at most 100000;
                               0: none)
      --log-changes            log each saved group of changes to the journal, with who made them
                               (SECTIOND_CLIENT_NAME=, SECTIOND_CLIENT_UID=, SECTIOND_SECTIONS=...),
                               at most 200 entries at once and 20 a second; needs --history
      --bus system|session     also serve org.sectiond.Sectiond1 on that D-Bus bus (default: none);
                               a bus that is not there is retried, the sockets serve meanwhile
    \(EtcdOptions.usage)
      --check-config           validate the config and exit
      --allow-insecure         start even if the state directory is writable by others, or as
                               root even if the config or state file is writable by others
      --verbose                log debug lines (clients connecting, client errors)
      --version                print the version and exit
      --help                   print this help and exit
    """

  /// What the command line asks for: run, or print something and exit.
  public enum Action: Equatable {
    case run(DaemonOptions)
    case printAndExit(String)
  }

  /// A command line that cannot be used; the message says what to do instead.
  public struct UsageError: Error, CustomStringConvertible {
    public let description: String
  }

  public static func parse(_ arguments: [String], environment: (String) -> String? = ProcessInfo.environment)
    throws(UsageError) -> Action
  {
    let isRoot = ProcessInfo.userID == 0
    var options = DaemonOptions(socketPath: "")
    var socket: String?
    var noState = false
    var rest = arguments[...]
    var etcd: String?
    var etcdPrefix: String?
    var hostName: String?
    var etcdFiles: [String: String] = [:]
    func value(for flag: String) throws(UsageError) -> String {
      guard let value = rest.popFirst(), !value.isEmpty else {
        throw UsageError(description: "\(flag) needs a value; see sectiond --help")
      }
      return value
    }
    func count(for flag: String) throws(UsageError) -> Int {
      let text = try value(for: flag)
      guard let count = Int(text), count > 0 else {
        throw UsageError(description: "\(flag) needs a positive number, not \"\(text)\"")
      }
      return count
    }
    while let argument = rest.popFirst() {
      switch argument {
      case "--list":
        // An empty name is refused with the rule, not as a missing value.
        guard let name = rest.popFirst() else {
          throw UsageError(description: "--list needs a name: \(ListName.rule)")
        }
        do {
          options.list = try ListName(validating: name)
        } catch {
          throw UsageError(description: "--list: \(error)")
        }
      case "--config":
        options.configPath = try value(for: argument)
        options.configRequired = true
      case "--access":
        options.accessPath = try value(for: argument)
        options.accessRequired = true
      case "--socket": socket = try value(for: argument)
      case "--readonly-socket": options.readOnlySocketPath = try value(for: argument)
      case "--state": options.statePath = try value(for: argument)
      case "--no-state": noState = true
      case "--sync": options.fsync = .always
      case "--fsync":
        let word = try value(for: argument)
        guard let policy = FsyncPolicy(rawValue: word) else {
          throw UsageError(description: "--fsync needs always, everysec or no, not \"\(word)\"")
        }
        options.fsync = policy
      case "--max-clients": options.maxClients = try count(for: argument)
      case "--max-readonly-clients": options.maxReadOnlyClients = try count(for: argument)
      case "--fd-store": options.fdStore = try count(for: argument)
      case "--max-sections": options.editLimits.sections = try count(for: argument)
      case "--max-section-items": options.editLimits.itemsPerSection = try count(for: argument)
      case "--max-items": options.editLimits.items = try count(for: argument)
      case "--max-batch-lines": options.editLimits.batchLines = try count(for: argument)
      case "--max-text-bytes": options.editLimits.textBytes = try count(for: argument)
      case "--max-request-changes": options.editLimits.requestChanges = try count(for: argument)
      case "--history":
        let text = try value(for: argument)
        guard let count = Int(text), (0...DaemonOptions.historyLimit).contains(count) else {
          throw UsageError(
            description: "--history needs a number from 0 to \(DaemonOptions.historyLimit), not \"\(text)\"")
        }
        options.history = count
      case "--log-changes": options.logChanges = true
      case "--bus":
        let kind = try value(for: argument)
        guard let bus = Bus.Kind(rawValue: kind) else {
          throw UsageError(description: "--bus takes system or session, not \"\(kind)\"")
        }
        options.bus = bus
      case "--etcd": etcd = try value(for: argument)
      case "--etcd-prefix": etcdPrefix = try value(for: argument)
      case "--host-name": hostName = try value(for: argument)
      case "--etcd-cacert", "--etcd-cert", "--etcd-key", "--etcd-credentials":
        etcdFiles[argument] = try value(for: argument)
      case "--check-config": options.checkConfigOnly = true
      case "--allow-insecure": options.allowInsecure = true
      case "--verbose", "-v": options.verbose = true
      case "--version":
        return .printAndExit(
          "sectiond \(SectionService.daemonVersion) (protocol \(SectionService.protocolVersion))")
      case "--help", "-h": return .printAndExit(usage)
      default:
        throw UsageError(description: "unknown option \"\(argument)\"; see sectiond --help")
      }
    }
    if options.editLimits.requestChanges <= options.editLimits.sections {
      throw UsageError(
        description:
          "--max-request-changes \(options.editLimits.requestChanges) is too small for --max-sections \(options.editLimits.sections): OPEN ALL makes a change per section; give at least \(options.editLimits.sections + 1)"
      )
    }
    // What the limits let clients write must be read back at the next start: the state file,
    // and its journal, which `StateStore` compacts once it is past twice the state file (plus
    // one loop turn's changes, two requests' worth of events and journal at the most).
    let stateFile = SavedState.maximumSize(for: options.editLimits)
    if stateFile > (StateStore.readLimit - 2 * SectionService.renderedLimit) / 3 {
      throw UsageError(
        description:
          "the limits let clients grow a state file of \(stateFile) bytes, which with its journal is more than a start reads (\(StateStore.readLimit) bytes); lower --max-text-bytes, --max-items or --max-sections"
      )
    }
    // As sectionctl does: `SECTIOND_LIST=media sectiond` serves the list sectionctl then talks to.
    if options.list == nil, let name = environment("SECTIOND_LIST"), !name.isEmpty {
      do {
        options.list = try ListName(validating: name)
      } catch {
        throw UsageError(description: "SECTIOND_LIST: \(error)")
      }
    }
    options.etcd = try EtcdOptions.make(
      etcd: etcd, prefix: etcdPrefix, host: hostName, caFile: etcdFiles["--etcd-cacert"],
      certificateFile: etcdFiles["--etcd-cert"], keyFile: etcdFiles["--etcd-key"],
      credentialsFile: etcdFiles["--etcd-credentials"], list: options.list, environment: environment)
    if options.logChanges && options.history == 0 {
      throw UsageError(description: "--log-changes logs the history's records: give --history 1 or more")
    }
    if noState && options.statePath != nil {
      throw UsageError(description: "--state and --no-state contradict each other; give one")
    }
    if options.configPath == nil {
      let directory = defaultDirectory(
        systemd: "CONFIGURATION_DIRECTORY", root: "/etc", xdg: "XDG_CONFIG_HOME", under: ".config",
        environment: environment)
      let file = "\(directory)/\(options.list.map { "\($0).json" } ?? "sections.json")"
      if FileSystem.exists(file) { options.configPath = file }
    }
    if options.accessPath == nil {
      let directory = defaultDirectory(
        systemd: "CONFIGURATION_DIRECTORY", root: "/etc", xdg: "XDG_CONFIG_HOME", under: ".config",
        environment: environment)
      options.accessPath = "\(directory)/access.conf"
    }

    // A named list's sockets are in a directory of their own beside the unnamed list's.
    let named = options.list.map { "/\($0)" } ?? ""
    let runtimeDirectory =
      environment("XDG_RUNTIME_DIR").map { "\($0)/sectiond" } ?? "/tmp/sectiond-\(ProcessInfo.userID)"
    let defaultSocket = (isRoot ? "/run/sectiond" : runtimeDirectory) + "\(named)/control.sock"
    // $SECTIOND_SOCKET names the unnamed list's socket, and a named list's beside it, where
    // sectionctl -l NAME looks with the same variable (`make run`'s .run/NAME/).
    let given = environment("SECTIOND_SOCKET").flatMap { $0.isEmpty ? nil : $0 }
    options.socketPath =
      socket ?? given.map { path in options.list.map { SocketNames.path(of: $0, beside: path) } ?? path }
      ?? defaultSocket
    if socket == nil && given == nil && !isRoot { options.ownSocketDirectory = runtimeDirectory }
    if options.readOnlySocketPath == nil {
      options.readOnlySocketPath = SocketNames.readonlyPath(forControl: options.socketPath)
    }
    if !noState && options.statePath == nil {
      // A unit's StateDirectory= is its daemon's own (sectiond@.service: sectiond/%i); else a
      // named list keeps its state in a directory NAME of the unnamed list's.
      let underSystemd = environment("STATE_DIRECTORY") != nil
      let directory = defaultDirectory(
        systemd: "STATE_DIRECTORY", root: "/var/lib", xdg: "XDG_STATE_HOME", under: ".local/state",
        environment: environment)
      options.statePath = "\(directory)\(underSystemd ? "" : named)/state.json"
    }
    return .run(options)
  }

  /// sectiond's directory of one kind, found the same way for the config and the state: the first
  /// of the directories systemd names in `systemd` (ConfigurationDirectory=, StateDirectory=; for a
  /// user unit these are under the user's home), else `root/sectiond` for root, else
  /// `sectiond` under the XDG base directory `xdg` (default `~/under`), so that each user has their own.
  private static func defaultDirectory(
    systemd: String, root: String, xdg: String, under: String, environment: (String) -> String?
  ) -> String {
    if let directories = environment(systemd), let first = directories.split(separator: ":").first {
      return String(first)
    }
    if ProcessInfo.userID == 0 { return "\(root)/sectiond" }
    return "\(environment(xdg) ?? "\(environment("HOME") ?? "/tmp")/\(under)")/sectiond"
  }
}
