/// sectionctl's exit statuses, which scripts rely on: each says who to blame.
enum ExitStatus: Int32, Sendable {
  /// Everything asked for was done.
  case success = 0
  /// The daemon answered `ERR` (or something sectionctl could not read); its message was printed.
  case daemonError = 1
  /// The command line was wrong; nothing was sent.
  case usage = 2
  /// The daemon could not be reached, or went away before answering.
  case unavailable = 3
  /// `is-open`: the daemon has no such section.
  case noSection = 4
  /// The daemon serves as many clients as it may (`ERR BUSY`, `--max-clients`): try again later.
  /// A status of its own, as sysexits' EX_TEMPFAIL, so that a script can wait and retry.
  case busy = 5
  /// The daemon is part of a fleet whose etcd cannot take the change now (`ERR UNAVAILABLE`:
  /// no quorum, no member reachable, not joined yet): the request was fine, nothing may have
  /// been applied; a script retries once the fleet is back (reads still work meanwhile).
  case fleetUnavailable = 6
}
