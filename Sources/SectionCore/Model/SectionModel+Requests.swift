/// Requests that change the model, as a batch applies them one after another: each names
/// its sections as the list stands after the requests before it.
extension SectionModel {
  /// The index `ref` names now, or `ERR NOSECTION`.
  public func resolve(_ ref: SectionRef) throws(ProtocolError) -> Int {
    let count = sections.count
    switch ref {
    case .index(let index) where index < count: return index
    case .id(let id): if let index = index(ofID: id) { return index }
    default: break
    }
    let name: String
    switch ref {
    case .index(let index): name = index == Int.max ? "(too large)" : String(index)
    case .id(let id): name = String(decoding: id, as: UTF8.self)
    }
    let range = count == 0 ? "there are none" : "there are \(count) (0-\(count - 1))"
    throw ProtocolError(.noSection, "no section \"\(name)\": \(range)")
  }

  /// Applies one changing request (`Request.isBatchable`).
  public mutating func perform(
    _ request: Request, limits: EditLimits, changes: inout [Change]
  ) throws(ProtocolError) {
    func text(_ bytes: ArraySlice<UInt8>) -> String { String(decoding: bytes, as: UTF8.self) }
    switch request {
    case .open(.all):
      guard mode == .multi else {
        throw ProtocolError(
          .mode, "OPEN ALL needs multi mode; in exclusive mode one section is open at a time")
      }
      openAll(changes: &changes)
    case .close(.all): closeAll(changes: &changes)
    case .open(.section(let ref)): open(try resolve(ref), changes: &changes)
    case .close(.section(let ref)): close(try resolve(ref), changes: &changes)
    case .toggle(let ref): toggle(try resolve(ref), changes: &changes)
    case .mode(let newMode?): setMode(newMode, changes: &changes)
    case .insert(let position, let id, let title):
      let index = self.index(position, count: sections.count)
      try insert(id: text(id), title: text(title), at: index, limits: limits, changes: &changes)
    case .delete(let ref): delete(try resolve(ref), changes: &changes)
    case .move(let ref, let to): try move(try resolve(ref), to: to, changes: &changes)
    case .rename(let ref, let title):
      try rename(try resolve(ref), to: text(title), limits: limits, changes: &changes)
    case .itemInsert(let ref, let position, let item):
      let section = try resolve(ref)
      let at = self.index(position, count: sections[section].items.count)
      try editItems(section, .insert(at: at, text: text(item)), limits: limits, changes: &changes)
    case .itemDelete(let ref, let at):
      try editItems(try resolve(ref), .delete(at: at), limits: limits, changes: &changes)
    case .itemMove(let ref, let from, let to):
      try editItems(try resolve(ref), .move(from: from, to: to), limits: limits, changes: &changes)
    case .itemSet(let ref, let at, let item):
      try editItems(try resolve(ref), .set(at: at, text: text(item)), limits: limits, changes: &changes)
    default:
      preconditionFailure("\(request) does not change the model")
    }
  }

  private func index(_ position: Position, count: Int) -> Int {
    switch position {
    case .at(let index): index
    case .end: count
    }
  }
}
