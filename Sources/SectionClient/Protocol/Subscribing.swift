import SectionGrammar

/// How a subscription starts, for every follower of the daemon's events (`Subscriber`, and
/// sectionctl's shell and ui on their non-blocking connections): one rule for what is asked
/// and for what the reply means.
package enum Subscribing {
  /// What the daemon said to `request(after:)`.
  package enum Start: Equatable {
    /// `OK <rev>` without a state line: the changes after the revision follow as events.
    case resumed
    /// A `state` line: a first subscription, or one the daemon could not resume (it no longer
    /// keeps the changes, or has older revisions).
    case snapshot(StateSnapshot)
    /// An error: `SUBSCRIBE FROM` on a daemon older than the history; subscribe plainly.
    case refused
  }

  /// `SUBSCRIBE FROM <rev>` after the last revision seen, `SUBSCRIBE` without one.
  package static func request(after revision: UInt64?) -> String {
    revision.map { "\(Verb.subscribe.name) FROM \($0)" } ?? Verb.subscribe.name
  }

  package static func start(of reply: Reply) -> Start {
    if let snapshot = reply.state { return .snapshot(snapshot) }
    return reply.revision == nil ? .refused : .resumed
  }
}
