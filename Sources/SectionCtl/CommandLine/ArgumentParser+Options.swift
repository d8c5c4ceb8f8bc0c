import Posix
import SectionClient

extension ArgumentParser {
  /// The options seen, wherever they appeared.
  struct Options {
    var help = false
    var version = false
    var json = false
    var readonly = false
    var all = false
    var view = false
    /// `reload --fresh`.
    var fresh = false
    /// `reload --fresh --force`.
    var force = false
    /// `is-open -q`.
    var quiet = false
    var socket: String?
    var readonlySocket: String?
    /// `-l`, `--list`: the named list to talk to.
    var list: ListName?
    /// `pipe --list-from-query`.
    var listFromQuery = false
    var count: Int?
    /// `log -n`: how many changes.
    var lines: Int?
    /// `log -f`.
    var follow = false
    /// `log --from`, `watch --from`: after which revision.
    var from: UInt64?
    /// `log --since`: seconds since the epoch.
    var since: Int?
    /// `--name`: the connections' name in the daemon's history.
    var name: String?
    /// `--at`: where add and item add insert.
    var at: Int?
    /// `--timeout`: seconds a one-shot command waits for the daemon.
    var timeout: Double?
    /// Every option given, in order, for the check of where each applies.
    var given: [CommandOption] = []

    mutating func take(_ argument: String, from remaining: inout ArraySlice<String>) throws(CommandLineError)
    {
      let parts = argument.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
      let name = String(parts[0])
      let inlineValue = parts.count == 2 ? String(parts[1]) : nil
      func flag() throws(CommandLineError) -> Bool {
        if inlineValue != nil { throw .usage("option \(name) takes no value") }
        return true
      }
      func value() throws(CommandLineError) -> String {
        guard let value = inlineValue ?? remaining.popFirst(), !value.isEmpty else {
          throw .usage("option \(name) needs a value")
        }
        return value
      }
      guard let option = CommandOption.named(name) else { throw .usage("unknown option '\(name)'") }
      given.append(option)
      switch option {
      case .help: help = try flag()
      case .version: version = try flag()
      case .json: json = try flag()
      case .readonly: readonly = try flag()
      case .all: all = try flag()
      case .view: view = try flag()
      case .listFromQuery: listFromQuery = try flag()
      case .fresh: fresh = try flag()
      case .force: force = try flag()
      case .quiet: quiet = try flag()
      case .follow: follow = try flag()
      case .lines:
        let text = try value()
        guard let number = Int(text), number >= 0, number <= 100_000 else {
          throw .usage("-n needs a number of changes from 0 to 100000, not '\(text)'")
        }
        lines = number
      case .socket: socket = try value()
      case .readonlySocket: readonlySocket = try value()
      case .list:
        // An empty name is refused with the rule, as any other bad name.
        guard let name = inlineValue ?? remaining.popFirst() else {
          throw .usage("option \(name) needs a list name: \(ListName.rule)")
        }
        do {
          list = try ListName(validating: name)
        } catch {
          throw .usage("\(error)")
        }
      case .at:
        let text = try value()
        guard let number = Int(text), number >= 0 else {
          throw .usage("--at needs an index, 0 or more, not '\(text)'")
        }
        at = number
      case .timeout:
        let text = try value()
        guard let seconds = Double(text), seconds >= 0, seconds <= 86_400 * 365 else {
          throw .usage("--timeout needs a number of seconds, 0 (no limit) or more, not '\(text)'")
        }
        timeout = seconds
      case .from:
        let text = try value()
        // Revisions go up to 2^63-1 (docs/PROTOCOL.md).
        guard let revision = UInt64(text), revision <= UInt64(Int64.max) else {
          throw .usage("--from needs a revision, a whole number from 0 to 9223372036854775807, not '\(text)'")
        }
        from = revision
      case .since:
        let text = try value()
        guard let seconds = SinceTime.parse(text, now: wallClockSeconds()) else {
          throw .usage("--since takes \(SinceTime.forms); not '\(text)'")
        }
        since = seconds
      case .name:
        let text = try value()
        guard ClientName.isValid(text) else {
          throw .usage(
            "--name needs 1 to 64 of the characters A-Z a-z 0-9 . _ : @ - (the daemon's rule for CLIENT NAME), not '\(text)'"
          )
        }
        self.name = text
      case .count:
        let text = try value()
        guard let number = Int(text), number > 0 else {
          throw .usage("--count needs a whole number of changes, 1 or more, not '\(text)'")
        }
        count = number
      }
    }
  }
}
