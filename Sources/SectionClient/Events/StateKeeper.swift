/// Keeps a `SectionState` current from a `Subscriber`'s updates, asking the daemon on the
/// subscription's own connection for what the state needs: the list again after a change to
/// it, the items of a section opened since the last VIEW. Events that come meanwhile wait in
/// the `Client`, and those the reply already shows change nothing (`SectionState.apply`).
/// What `AsyncClient.states()` and `Follower` both run.
struct StateKeeper {
  private(set) var state: SectionState?
  /// Whether the state follows the open sections' items (VIEW and ITEMS rather than LIST).
  let followsItems: Bool

  init(followsItems: Bool) { self.followsItems = followsItems }

  /// Takes one update: the state after it, nil when it changed nothing. A new subscription
  /// (the first, or one that could not resume) starts the state afresh, whatever revision the
  /// daemon has now: it may have restarted with older ones (`--no-state`).
  mutating func take(_ update: Subscriber.Update, on client: Client) throws(ClientError) -> SectionState? {
    var next: SectionState
    switch update {
    case .subscribed(let snapshot):
      next =
        followsItems
        ? SectionState(snapshot: snapshot, view: try client.perform(.view))
        : SectionState(snapshot: snapshot, listing: try client.perform(.list))
    case .event(let event):
      guard state != nil else { return nil }
      // Taken out, so that `next` alone holds it and the change is made in place rather than
      // to a copy (of every section, on every event).
      next = state!
      state = nil
      switch next.apply(event) {
      case .unchanged:
        state = next
        return nil
      case .changed: break
      case .needsList:
        do throws(ClientError) {
          next.relisted(try client.perform(next.listRequest))
        } catch {
          state = next
          throw error
        }
      }
    }
    for id in next.missingItems {
      do throws(ClientError) {
        next.received(try client.perform(.items(id)), of: id)
      } catch .daemon {
        // The section went away meanwhile: its event, coming, asks for the list again.
      }
    }
    state = next
    return next
  }
}
