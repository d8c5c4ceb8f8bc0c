/// Reads a watch line holding events straight from its bytes, without building the JSON tree:
/// every fleet host reads every change from its watch, and the tree (its Strings, arrays and
/// their release) was about 40% of the instructions a host that did not make the change spent
/// on it (docs/PERFORMANCE.md, "Fleet").
///
/// Only the shape etcd 3.4's gateway writes for events is recognized, member by member:
/// `{"result":{"header":{…},"events":[{"type":…,"kv":{…}},…]}}`, every value a string of
/// digits or base64, no white space, no member twice, no member it does not know. Anything
/// else (a `created`, a cancel, a compaction, an error, a progress notification, `prev_kv`, an
/// escaped character, a number written as a number) is nil, and the caller parses the line in
/// full (`GatewayScanner`).
enum WatchLine {
  /// The line's events, as the full parser would read them; nil when the line is not one this
  /// reader knows.
  static func events(in line: ArraySlice<UInt8>) -> WatchUpdate? {
    GatewayScanner.read(line) { $0.watchUpdate() }
  }
}

extension GatewayScanner {
  fileprivate mutating func watchUpdate() -> WatchUpdate? {
    guard take(#"{"result":"#) else { return nil }
    var revision: Int64 = 0
    var events: [KeyEvent] = []
    var seen = Members()
    let read = object { scanner, name in
      switch name {
      case "header" where seen.first(0):
        guard let found = scanner.header() else { return false }
        revision = found.revision
        return true
      case "events" where seen.first(1): return Self.store(scanner.eventList(), in: &events)
      default: return false
      }
    }
    guard read, take("}"), atEnd, !events.isEmpty else { return nil }
    return .events(events, revision: revision)
  }

  private mutating func eventList() -> [KeyEvent]? {
    guard take("[") else { return nil }
    var events: [KeyEvent] = []
    repeat {
      guard let event = event() else { return nil }
      events.append(event)
    } while take(",")
    return take("]") ? events : nil
  }

  private mutating func event() -> KeyEvent? {
    var kind = KeyEvent.Kind.put
    var kv = KeyValue(key: [], value: [], createRevision: 0, modRevision: 0, version: 0, lease: 0)
    var seen = Members()
    let read = object { scanner, name in
      switch name {
      case "type" where seen.first(0):
        switch Text(scanner.string()) {
        case "PUT": kind = .put
        case "DELETE": kind = .delete
        default: return false
        }
        return true
      case "kv" where seen.first(1): return Self.store(scanner.keyValue(), in: &kv)
      default: return false
      }
    }
    return read ? KeyEvent(kind: kind, kv: kv, prevKV: nil) : nil
  }

  private mutating func keyValue() -> KeyValue? {
    var kv = KeyValue(key: [], value: [], createRevision: 0, modRevision: 0, version: 0, lease: 0)
    var seen = Members()
    let read = object { scanner, name in
      switch name {
      case "key" where seen.first(0): Self.store(scanner.base64(), in: &kv.key)
      case "value" where seen.first(1): Self.store(scanner.base64(), in: &kv.value)
      case "create_revision" where seen.first(2): Self.store(scanner.signed(), in: &kv.createRevision)
      case "mod_revision" where seen.first(3): Self.store(scanner.signed(), in: &kv.modRevision)
      case "version" where seen.first(4): Self.store(scanner.signed(), in: &kv.version)
      case "lease" where seen.first(5): Self.store(scanner.signed(), in: &kv.lease)
      default: false
      }
    }
    return read ? kv : nil
  }
}
