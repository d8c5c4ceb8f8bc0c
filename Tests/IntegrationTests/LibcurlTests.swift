import Foundation
import Glibc
import Testing

/// libcurl and what it brings map 6-9 MB: only the etcd fleet mode may load it (the Etcd
/// module dlopens it on first use). A daemon without --etcd must have none of it mapped.
@Suite struct LibcurlTests {
  /// The shared objects mapped into `pid` whose file name contains `name`.
  private func mapped(_ name: String, in pid: Int32) throws -> [String] {
    // Read to the end: Foundation's String(contentsOfFile:) stops at the first page of a /proc file.
    let handle = try #require(FileHandle(forReadingAtPath: "/proc/\(pid)/maps"))
    let maps = String(decoding: handle.readDataToEndOfFile(), as: UTF8.self)
    return Set(
      maps.split(separator: "\n").compactMap { line in
        line.split(separator: " ", omittingEmptySubsequences: true).last.map(String.init)
      }
    ).filter { $0.contains(name) }.sorted()
  }

  @Test func daemonWithoutEtcdMapsNoLibcurl() throws {
    let daemon = try TestDaemon()
    let pid = try #require(daemon.process?.processIdentifier)
    #expect(try mapped("libcurl", in: pid) == [])
    // The probe sees libcurl when it is there: the same daemon with it preloaded.
    let preloaded = try TestDaemon(environment: ["LD_PRELOAD": "libcurl.so.4"])
    let other = try #require(preloaded.process?.processIdentifier)
    let libraries = try mapped(".so", in: other)
    #expect(libraries.filter { $0.contains("libcurl") }.count == 1, "\(libraries)")
  }
}
