import Posix

/// sectionctl's entry point: parse, run, print any error, exit with the status scripts rely on.
public enum Tool {
  public static func main(_ arguments: [String]) -> Never {
    var output = Output()
    let status: ExitStatus
    // Before parsing, for a usage error: --json or -j anywhere asks for JSON errors.
    output.json = arguments.contains("--json") || arguments.contains("-j")
    var readonly = false
    do {
      let invocation = try ArgumentParser.parse(arguments)
      output.json = invocation.json
      readonly = invocation.readonly
      status = try Runner(invocation: invocation, environment: .current, output: output).run()
    } catch {
      output.report(readonly ? error.onReadonlySocket : error)
      status = error.exitStatus
    }
    ProcessInfo.exit(status.rawValue)
  }
}
