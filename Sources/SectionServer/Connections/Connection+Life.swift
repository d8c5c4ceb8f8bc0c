import SectionCore

extension Connection {
  /// What the connection waits for. Requests are taken only in `.ready`; every other state
  /// names the one thing it waits for.
  enum State: Equatable {
    /// Taking requests.
    case ready
    /// It changed state in this loop turn: its replies from `replyStart` in the output's
    /// tail (`replies` of them, the group) are held until the turn's changes are saved, and
    /// each is replaced by the error if the save fails. It goes on taking the changes it
    /// has read in this turn, each joining the group, up to the first other request (a
    /// read, PING, QUIT), which is handled after the save; it reads no more from its socket
    /// until then.
    case awaitingSave(replyStart: Int, replies: Int)
    /// Its next request would show other clients' changes that are not saved yet: it is
    /// handled once they are.
    case awaitingOthersSave
    /// A megabyte of output waits, or a long answer is still being made: no requests are
    /// taken until the client reads half of it, or all of the answer.
    case outputBlocked
    /// QUIT was received: write what is queued, then close.
    case quitting
    case closed
  }

  /// Where a connection is in its life, as one value that changes only through
  /// `next(on:)`: `Connection.handle(_:)` applies an event and traps an illegal one, so a
  /// connection can never be, say, released from a save it was not waiting for, or take a
  /// request after QUIT.
  ///
  /// The value has four parts. `state` is what the connection waits for (requests are taken
  /// only in `.ready`); `inputEnded`, that the client ended its input (once, for good);
  /// `subscription`, whether and how it is sent events; `parked`, that the client hung up
  /// while the connection waits for a save, so its socket is out of the server's epoll set
  /// until the wait ends (`Server.park`).
  ///
  /// Events, and the changes they make (every other pair is illegal):
  ///
  /// | event | from | to |
  /// |---|---|---|
  /// | `changed(replyStart:)` | `ready` | `awaitingSave(replyStart:, replies: 1)` |
  /// | | `awaitingSave(s, n)` | `awaitingSave(s, n + 1)` |
  /// | `replied` (ERR TOOLONG) | `ready` | `ready` |
  /// | | `awaitingSave(s, n)` | `awaitingSave(s, n + 1)` |
  /// | `outputMoved(by: m)` | `awaitingSave(s, n)` | `awaitingSave(s - m, n)` |
  /// | `waitForOthers` | `ready` | `awaitingOthersSave` |
  /// | `released` (the save is done or refused) | `awaitingSave`, `awaitingOthersSave` | `ready`, not parked |
  /// | `park` | `awaitingSave`, `awaitingOthersSave`, not parked | parked |
  /// | `outputFull` | `ready` | `outputBlocked` |
  /// | `outputDrained` | `outputBlocked` | `ready` |
  /// | `quit` | `ready` | `quitting` |
  /// | `close` | any but `closed` | `closed`, not parked |
  /// | `endOfInput` | any but `closed`, input not ended | input ended |
  /// | `subscribe` | subscription `none` | `live` |
  /// | `replay` | `live` | `replaying` |
  /// | `replayEnded(caughtUp:)` | `replaying` | `live`, or `owedSnapshot` when a change went missing |
  /// | `fellBehind` | `live` | `owedSnapshot` |
  /// | `snapshotSent` | `owedSnapshot` | `live` |
  /// | `unsubscribe` | any but `none` | `none` |
  ///
  /// The subscription events are legal in any state but `closed`; `close` needs the
  /// subscription ended first (`Server.close` unsubscribes). Parking changes no other event's
  /// legality, and only `released` and `close` end it: so a parked connection is always one
  /// that waits for a save, and every wait that ends puts it back (`Server.release`).
  struct Life: Equatable {
    var state = State.ready
    var inputEnded = false
    var subscription = Subscription.none
    /// Out of the epoll set: epoll reports a hang-up at every poll whatever the socket is
    /// watched for, and a connection waiting for a save can neither read nor write, so the
    /// loop would spin until the save (with a commit backend elsewhere, a round trip to it:
    /// seconds when it is slow). What it does once released meets the hang-up as any
    /// connection does.
    var parked = false

    /// What happens to a connection; see the table above for what each may change.
    enum Event: Equatable {
      /// A change's reply was queued from `replyStart`: it begins the group held for the
      /// save, or joins it.
      case changed(replyStart: Int)
      /// A reply that is not a change's was queued (ERR TOOLONG): it joins a held group.
      case replied
      /// The output's sent bytes were dropped: the held replies start `by` bytes earlier.
      case outputMoved(by: Int)
      /// Its next request waits for other clients' changes to be saved.
      case waitForOthers
      /// The save it waited for is done, or refused.
      case released
      /// The client hung up while the connection waits for a save: it leaves the epoll set.
      case park
      case outputFull
      case outputDrained
      case quit
      case close
      case endOfInput
      case subscribe
      /// A replay of the history began (SUBSCRIBE SINCE).
      case replay
      /// The replay is sent; `caughtUp` false when a change it should have shown went.
      case replayEnded(caughtUp: Bool)
      /// Too many events wait unread: they are dropped for one `!state` snapshot.
      case fellBehind
      case snapshotSent
      case unsubscribe
    }

    /// The life after `event`, or nil when the event is illegal here.
    @inline(__always)
    func next(on event: Event) -> Life? {
      var next = self
      switch (event, state) {
      case (.changed(let start), .ready):
        next.state = .awaitingSave(replyStart: start, replies: 1)
      case (.changed, .awaitingSave(let start, let replies)),
        (.replied, .awaitingSave(let start, let replies)):
        next.state = .awaitingSave(replyStart: start, replies: replies + 1)
      case (.replied, .ready):
        break
      case (.outputMoved(let moved), .awaitingSave(let start, let replies)):
        next.state = .awaitingSave(replyStart: start - moved, replies: replies)
      case (.waitForOthers, .ready):
        next.state = .awaitingOthersSave
      case (.released, .awaitingSave), (.released, .awaitingOthersSave):
        next.state = .ready
        next.parked = false
      case (.park, .awaitingSave) where !parked, (.park, .awaitingOthersSave) where !parked:
        next.parked = true
      case (.outputFull, .ready):
        next.state = .outputBlocked
      case (.outputDrained, .outputBlocked):
        next.state = .ready
      case (.quit, .ready):
        next.state = .quitting
      case (.close, _) where state != .closed && subscription == .none:
        next.state = .closed
        next.parked = false
      case (.endOfInput, _) where state != .closed && !inputEnded:
        next.inputEnded = true
      case (.subscribe, _) where state != .closed && subscription == .none:
        next.subscription = .live
      case (.replay, _) where state != .closed && subscription == .live:
        next.subscription = .replaying
      case (.replayEnded(let caughtUp), _) where state != .closed && subscription == .replaying:
        next.subscription = caughtUp ? .live : .owedSnapshot
      case (.fellBehind, _) where state != .closed && subscription == .live:
        next.subscription = .owedSnapshot
      case (.snapshotSent, _) where state != .closed && subscription == .owedSnapshot:
        next.subscription = .live
      case (.unsubscribe, _) where state != .closed && subscription != .none:
        next.subscription = .none
      default:
        return nil
      }
      return next
    }
  }
}
