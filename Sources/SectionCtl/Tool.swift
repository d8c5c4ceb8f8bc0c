import Posix

/// sectionctl's entry point: parse, run, print any error, exit with the status scripts rely on.
public enum Tool {
  public static func main(_ arguments: [String]) -> Never {
    let output = Output()
    let status: ExitStatus
    do {
      let invocation = try ArgumentParser.parse(arguments)
      status = try Runner(invocation: invocation, environment: .current, output: output).run()
    } catch {
      output.diagnose(error.message)
      status = error.exitStatus
    }
    ProcessInfo.exit(status.rawValue)
  }
}
