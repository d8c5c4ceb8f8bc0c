extension Batch {
  /// The level that may apply the whole batch: that of END (operate), or of its highest line
  /// (`Request.level`); a line that does not parse needs no more, as it refuses the batch
  /// anyway. A face that must ask someone for a level before it runs a batch asks for this
  /// one (the bus asks polkit); the lines are parsed again when the batch is applied.
  public var level: AccessLevel {
    var level = Request.end.level
    try? forEachLine { (line, _) throws(ProtocolError) in
      if case .success(let request)? = RequestParser.parse(line) { level = max(level, request.level) }
    }
    return level
  }
}
