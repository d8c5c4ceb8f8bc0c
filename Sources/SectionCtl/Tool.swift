import Glibc
import Posix
import SectionClient

/// sectionctl's entry point: parse, run, print any error, exit with the status scripts rely on.
public enum Tool {
  public static func main(_ arguments: [String]) -> Never {
    var output = Output()
    let status: ExitStatus
    // Before parsing, for a usage error: --json or -j anywhere asks for JSON errors.
    output.json = arguments.contains("--json") || arguments.contains("-j")
    var readonly = false
    do throws(CommandLineError) {
      try checkEncoding(
        Array(UnsafeBufferPointer(start: CommandLine.unsafeArgv, count: Int(CommandLine.argc))))
      var invocation = try ArgumentParser.parse(arguments)
      output.json = invocation.json
      readonly = invocation.readonly
      if let socket = invocation.socket, let list = invocation.list, !invocation.json {
        output.diagnose(
          "warning: --socket wins over --list: talking to \(socket), not to the list \(list) "
            + "(its socket would be \(SocketNames.path(of: list, beside: socket)))")
      }
      let environment = Environment.current
      do {
        invocation.list = try SocketLocation.list(explicit: invocation.list, environment: environment)
      } catch {
        throw .usage("SECTIOND_LIST: \(error)")
      }
      let runner = Runner(invocation: invocation, environment: environment, output: output)
      // Once, from the command line: the shell's lines name the socket it found, which is not
      // the user naming it.
      Connection.socketIsNamed = runner.socketIsNamed
      status = try runner.run()
    } catch {
      output.report(readonly ? error.onReadonlySocket : error)
      status = error.exitStatus
    }
    ProcessInfo.exit(status.rawValue)
  }

  /// Refuses an argument that is not UTF-8. Swift hands `arguments` over with such bytes
  /// replaced by U+FFFD, which the daemon would then store in a title as if typed; the raw
  /// `argv` (program name first) is checked instead.
  static func checkEncoding(_ argv: [UnsafeMutablePointer<CChar>?]) throws(CommandLineError) {
    for (index, argument) in argv.enumerated().dropFirst() {
      guard let argument, String(validatingCString: argument) == nil else { continue }
      let bytes = UnsafeBufferPointer(start: argument, count: strlen(argument)).map { UInt8(bitPattern: $0) }
      throw .usage(
        "argument \(index) is not valid UTF-8 ('\(VisibleText.decode(bytes))'); nothing was sent: "
          + "sectiond keeps text as UTF-8 (convert it, e.g. with iconv -f LATIN1 -t UTF-8)")
    }
  }
}
