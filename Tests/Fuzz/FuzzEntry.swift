// The one entry libFuzzer calls. Every target is compiled into one binary, which runs the one
// SECTIOND_FUZZ_TARGET names (fuzz.sh sets it): SectionCore is then built with the fuzzer and
// ASan once, not once a target (about 65 s each on the 2-core CI machine).

import Glibc

private let target: (UnsafePointer<UInt8>, Int) -> Int32 = {
  let name = getenv("SECTIOND_FUZZ_TARGET").map { String(cString: $0) } ?? ""
  switch name {
  case "request": return fuzzRequests
  case "config": return fuzzConfig
  case "state": return fuzzState
  default: fatalError("SECTIOND_FUZZ_TARGET is \"\(name)\": set it to request, config or state")
  }
}()

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOne(_ data: UnsafePointer<UInt8>, _ size: Int) -> Int32 { target(data, size) }
