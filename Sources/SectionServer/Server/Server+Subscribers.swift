import SectionCore

/// The subscribers: who is sent events, and what one that falls behind is owed.
extension Server {
  /// Queues the events for every subscriber; one that has too much unread gets a snapshot later.
  /// One that has read everything takes the turn's events whole, however many changes the
  /// turn's pipelines made (a large block is shared between subscribers, not copied).
  func broadcast(_ events: [UInt8]) {
    guard !events.isEmpty else { return }
    for subscriber in subscribers where subscriber.subscription == .live {
      if !subscriber.output.isEmpty && subscriber.output.count + events.count > Connection.eventLimit {
        subscriber.handle(.fellBehind)
        queueFlush(subscriber)
      } else if subscriber.enqueue(events) {
        queueFlush(subscriber)
      }
    }
  }

  /// Queues the `!state` a subscriber is owed ahead of the reply it is about to get, so that a
  /// reply never overtakes it (after `PING` → `OK`, every earlier change has been seen).
  /// False when unsaved changes make a snapshot impossible now.
  func sendOwedSnapshot(_ connection: Connection) -> Bool {
    guard !service.hasUnsavedChanges else { return false }
    connection.handle(.snapshotSent)
    service.appendStateEvent(to: &connection.output)
    return true
  }

  func subscribe(_ connection: Connection) {
    guard !connection.isSubscribed else { return }
    connection.handle(.subscribe)
    connection.subscriberSlot = subscribers.count
    subscribers.append(connection)
    connectionStore?.update(connection)
    status?.figuresChanged()
  }

  func unsubscribe(_ connection: Connection) {
    guard connection.isSubscribed else { return }
    let slot = connection.subscriberSlot
    subscribers.swapAt(slot, subscribers.count - 1)
    subscribers[slot].subscriberSlot = slot
    subscribers.removeLast()
    connection.handle(.unsubscribe)
    connectionStore?.update(connection)
    status?.figuresChanged()
  }
}
