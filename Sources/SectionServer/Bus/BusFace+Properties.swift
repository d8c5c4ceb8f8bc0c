import SectionCore
import Systemd

/// The properties, Properties.Set of Mode, and reads that wait for a save.
extension BusFace {
  static let properties = ["Mode", "Revision", "OpenSections", "Sections"]

  /// Writes the value of `property` (for Get, GetAll and PropertiesChanged, through sd-bus).
  func append(property: String, to writer: inout BusWriter) throws {
    let model = server.model
    switch property {
    case "Mode": try writer.append(model.mode.rawValue)
    case "Revision": try writer.append(model.revision)
    case "OpenSections": try writer.append(model.openIndices.lazy.map { model.sections[$0].id })
    default: try appendSections(to: &writer)
    }
  }

  /// `a(ssbu)`: id, title, open, item count of every section, in order.
  func appendSections(to writer: inout BusWriter) throws {
    let model = server.model
    try writer.container("a", "(ssbu)") { writer in
      for (section, openSince) in zip(model.sections, model.openedAt) {
        try writer.container("r", "ssbu") { writer in
          try writer.append(section.id)
          try writer.append(section.title)
          try writer.append(openSince != nil)
          try writer.append(UInt32(clamping: section.items.count))
        }
      }
    }
  }

  /// Sees every call to the object before sd-bus does. Takes Properties.Set (its return
  /// must wait for the save; sd-bus would answer at once), and a Get or GetAll while changes
  /// are unsaved (its answer would show them): that one is answered after the save.
  func intercept(_ call: BusCall) -> Bool {
    let properties = BusFace.propertiesInterface
    if call.isMethodCall(interface: properties, member: "Get")
      || call.isMethodCall(interface: properties, member: "GetAll")
    {
      guard (try? call.readString(atMost: 255)) == BusFace.interface else {
        call.rewind()
        return false
      }
      let property = try? call.readString(atMost: 255)
      if property != "Mode", property != "Revision", refuseWhileBehind(call) { return true }
      guard server.hasUnsavedChanges else {
        call.rewind()
        return false
      }
      server.waitForSave(WaitingCall(call: call, request: nil))
      return true
    }
    guard call.isMethodCall(interface: properties, member: "Set"),
      (try? call.readString(atMost: 255)) == BusFace.interface,
      let property = try? call.readString(atMost: 255)
    else {
      call.rewind()
      return false
    }
    guard property == "Mode" else {
      if !BusFace.properties.contains(property) {
        call.rewind()
        return false
      }
      send(error: "org.freedesktop.DBus.Error.PropertyReadOnly", "\(property) is read-only", to: call)
      return true
    }
    guard call.enterVariant("s"), let mode = try? call.readString(atMost: 255) else {
      answer(call, ProtocolError(.syntax, "Mode is a string: multi or exclusive"))
      return true
    }
    do throws(ProtocolError) {
      run(call, try BusRequest(mode: mode))
    } catch {
      answer(call, error)
    }
    return true
  }

  func send(error name: String, _ text: String, to call: BusCall) {
    do { try call.replyError(name, text) } catch { Log.debug("D-Bus: an error reply was not sent: \(error)") }
  }

  /// Answers a Get or GetAll that waited for a save, as sd-bus would have.
  func answerPropertyRead(_ call: BusCall) {
    let all = call.member == "GetAll"
    _ = try? call.readString(atMost: 255)
    let name = all ? nil : try? call.readString(atMost: 255)
    if let name, !BusFace.properties.contains(name) {
      send(error: "org.freedesktop.DBus.Error.UnknownProperty", "no property \(name)", to: call)
      return
    }
    send(call) { writer in
      guard let name else {
        try writer.container("a", "{sv}") { writer in
          for property in BusFace.properties {
            try writer.container("e", "sv") { writer in
              try writer.append(property)
              try self.appendVariant(property, to: &writer)
            }
          }
        }
        return
      }
      try self.appendVariant(name, to: &writer)
    }
  }

  private func appendVariant(_ property: String, to writer: inout BusWriter) throws {
    let signature = ["Mode": "s", "Revision": "t", "OpenSections": "as"][property] ?? "a(ssbu)"
    try writer.container("v", signature) { writer in try self.append(property: property, to: &writer) }
  }
}
