// Shared by every fuzz target (compiled into each): a check that, unlike `precondition` in an
// -O build, says what broke before libFuzzer writes the reproducer.

func check(
  _ condition: @autoclosure () -> Bool, _ message: @autoclosure () -> String,
  file: StaticString = #fileID, line: UInt = #line
) {
  if !condition() { fatalError("fuzz check failed: \(message())", file: file, line: line) }
}
