import SectionClient

extension ClientError.Remedies {
  /// sectionctl's: its options, as `--help` names them.
  static let commandLine = ClientError.Remedies(
    otherSocket: "or point at another daemon with --socket (-s) PATH or SECTIOND_SOCKET",
    checkSocket: "check --socket, --readonly-socket or SECTIOND_SOCKET",
    shorterSocket: "use a shorter --socket",
    readonly: "use --readonly (-r) to read and watch",
    waitLonger: "wait longer with --timeout SECONDS, 0 for no limit",
    reader: "sectionctl", whatItSpeaks: "'sectionctl send VERSION' shows what it speaks",
    usage: "\nTry 'sectionctl --help' for more information.")
}

extension ClientError {
  /// The diagnostic as sectionctl shows it, without the `sectionctl: ` prefix: the library's
  /// message with sectionctl's options as the fixes (`message` names a program's).
  var diagnostic: String { message(.commandLine) }
}
