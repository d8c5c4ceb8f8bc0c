import SectionCore

/// This host's part in a fleet (`--etcd`), as the server sees it: the fleet itself
/// (SectionFleet's `Fleet`, on etcd) is linked only into sectiond-fleet, so that a sectiond
/// without `--etcd` maps none of its code (its idle RSS stays what it was without the fleet). Its outcomes come
/// back through `Server+Fleet`.
package protocol FleetAgent: AnyObject {
  /// Whether changes must wait: a commit or a catch-up is under way.
  var isBusy: Bool { get }
  /// Whether a group's commit is under way: clients wait for its outcome, a stop too.
  var isCommitting: Bool { get }
  /// A SIGHUP came while the fleet was busy: reload once it is through.
  var reloadWhenIdle: Bool { get set }
  /// STATUS's `fleet-*` lines.
  var statusFields: [(String, String)] { get }
  /// Joins the fleet, and then sends READY=1; changes wait for it (within a change's bound),
  /// reads are served from the local state meanwhile.
  func start() throws
  func stop()
  /// Sends the turn's group (the service's unsaved changes); returns the refusal when it
  /// cannot be sent at all. The outcome comes later: `fleetCommitted`, `fleetRetry`, `fleetRefused`.
  func commit(_ group: SavedGroup) -> ProtocolError?
}

/// Makes the fleet for a server: what sectiond-fleet's main gives `Daemon.main`.
package typealias FleetFactory = (FleetOptions, Server) throws -> any FleetAgent
