import SectionCore

/// A refusal on the bus: the protocol's error code, as its D-Bus error name.
extension ProtocolError.Code {
  /// The D-Bus error name of a protocol error code (docs/DBUS.md, "Errors").
  var busName: String {
    switch self {
    case .noSection: "org.sectiond.Sectiond1.Error.NoSuchSection"
    case .mode: "org.sectiond.Sectiond1.Error.WrongMode"
    case .exists: "org.sectiond.Sectiond1.Error.Exists"
    case .limit: "org.sectiond.Sectiond1.Error.Limit"
    case .internal, .busy: "org.sectiond.Sectiond1.Error.NotSaved"
    case .noItem: "org.sectiond.Sectiond1.Error.NoSuchItem"
    case .range: "org.sectiond.Sectiond1.Error.OutOfRange"
    case .config: "org.sectiond.Sectiond1.Error.Config"
    case .readOnly: "org.freedesktop.DBus.Error.AccessDenied"
    // Above the caller's level: a name of its own, so that a caller tells it from the bus's
    // policy refusing the call.
    case .denied: "org.sectiond.Sectiond1.Error.Denied"
    // History takes a count, never a revision: GONE does not reach the bus.
    case .gone: "org.sectiond.Sectiond1.Error.Gone"
    // The commit backend could not commit the change in time.
    case .unavailable: "org.sectiond.Sectiond1.Error.Unavailable"
    // UNKNOWN reaches the bus only from a line of Batch: an argument, like SYNTAX.
    case .syntax, .tooLong, .unknown: "org.freedesktop.DBus.Error.InvalidArgs"
    }
  }
}
