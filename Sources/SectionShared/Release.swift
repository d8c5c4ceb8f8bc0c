/// The version of sectiond and of the protocol it speaks, as the daemon answers `VERSION` and
/// `sectionctl version` prints them: one release, both sides.
package enum Release {
  package static let daemonVersion = "0.1.0"
  package static let protocolVersion = 1
}
