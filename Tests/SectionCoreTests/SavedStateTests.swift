import Testing

@testable import SectionCore

@Suite struct SavedStateTests {
  func decode(_ text: String) throws(ConfigError) -> SavedState { try SavedState.decode(Array(text.utf8)) }

  /// The message `text` is refused with, or nil when it is accepted.
  func refusal(_ text: String) -> String? {
    SectionCoreTests.refusal { () throws(ConfigError) in _ = try decode(text) }
  }

  func sampleModel() -> SectionModel {
    var model = SectionModel(config: abc())
    var changes: [Change] = []
    model.open(2, changes: &changes)
    model.open(0, changes: &changes)
    model.close(2, changes: &changes)
    model.setMode(.exclusive, changes: &changes)
    return model
  }

  @Test func encodesCompactlyInListOrder() {
    let text = String(decoding: SavedState.encode(sampleModel()), as: UTF8.self)
    #expect(
      text == #"""
        {"format":2,"revision":4,"mode":"exclusive","sections":{"a":2,"b":null,"c":null},
        "list":[
        {"id":"a","title":"A","items":["a1","a2"],"origin":"config"},
        {"id":"b","title":"B","items":["b1"],"origin":"config"},
        {"id":"c","title":"C","items":[],"origin":"config"}],
        "deleted":[],"edited":[]}

        """#)
  }

  @Test func encodesEditsAndEscapes() throws {
    var model = SectionModel(config: abc())
    var changes: [Change] = []
    try model.insert(id: "q", title: "Say \"hi\" \\ ö", at: 0, limits: EditLimits(), changes: &changes)
    try model.editItems(0, .insert(at: 0, text: "x\u{1F600}"), limits: EditLimits(), changes: &changes)
    try model.rename(1, to: "Aa", limits: EditLimits(), changes: &changes)
    model.delete(2, changes: &changes)
    let text = String(decoding: SavedState.encode(model), as: UTF8.self)
    #expect(text.contains(#"{"id":"q","title":"Say \"hi\" \\ ö","items":["x\#u{1F600}"],"origin":"client"}"#))
    #expect(text.hasSuffix(#""deleted":["b"],"edited":["a"]}"# + "\n"))
    let decoded = try SavedState.decode(Array(text.utf8))
    #expect(decoded == SavedState(model))
    #expect(decoded.list?.map(\.id) == ["q", "a", "c"])
    #expect(decoded.deleted == ["b"])
  }

  @Test func format1FilesStillLoad() throws {
    let state = try decode(#"{"format":1,"revision":4,"mode":"multi","sections":{"a":2,"b":null}}"#)
    #expect(state.list == nil)
    let model = SectionModel(config: abc(), saved: state)
    #expect(Array(model.sections) == abc().sections)
    #expect(model.openIndices == [0])
  }

  @Test func roundTrip() throws {
    let model = sampleModel()
    let decoded = try SavedState.decode(SavedState.encode(model))
    #expect(decoded == SavedState(model))
    #expect(
      decoded
        == SavedState(
          revision: 4, mode: .exclusive, sections: ["a": 2, "b": nil, "c": nil], list: abc().sections,
          deleted: []))
    #expect(SectionModel(config: abc(), saved: decoded) == model)
  }

  @Test func roundTripOfAFreshModel() throws {
    let model = SectionModel(config: Config.demo)
    let decoded = try SavedState.decode(SavedState.encode(model))
    #expect(decoded.revision == 0)
    #expect(decoded.mode == .multi)
    #expect(decoded.sections == ["first": nil, "second": nil, "third": nil])
  }

  @Test func decodesTheDocumentedExample() throws {
    let state = try decode(#"{"format":1,"revision":7,"mode":"multi","sections":{"first":3,"second":null}}"#)
    #expect(state == SavedState(revision: 7, mode: .multi, sections: ["first": 3, "second": nil]))
    #expect(state.sections["first"] == .some(3))
    #expect(state.sections["second"] == .some(nil))
    #expect(state.sections["third"] == nil)
  }

  @Test func largeRevisionsSurvive() throws {
    let state = try decode(
      #"{"format":1,"revision":9223372036854775807,"mode":"multi","sections":{"a":9223372036854775806}}"#)
    #expect(state.revision == UInt64(Int64.max))
    #expect(state.sections["a"] == .some(UInt64(Int64.max) - 1))
  }

  @Test func damagedFilesAreRefused() {
    #expect(refusal("") == "not valid JSON: line 1, column 1: unexpected end of input, expected a value")
    #expect(
      refusal(#"{"format":1,"revision":7,"mode":"multi","sections":{"#)?.hasPrefix("not valid JSON: ") == true
    )
    #expect(refusal("[]") == "unknown format; expected \"format\": 1 or 2")
    #expect(
      refusal(#"{"revision":1,"mode":"multi","sections":{}}"#)
        == "unknown format; expected \"format\": 1 or 2")
    #expect(
      refusal(#"{"format":3,"revision":1,"mode":"multi","sections":{}}"#)
        == "unknown format; expected \"format\": 1 or 2")
    #expect(
      refusal(#"{"format":"1","revision":1,"mode":"multi","sections":{}}"#)
        == "unknown format; expected \"format\": 1 or 2")
    #expect(refusal(#"{"format":2,"revision":1,"mode":"multi","sections":{}}"#) == "\"list\" is missing")
    #expect(
      refusal(#"{"format":2,"revision":1,"mode":"multi","sections":{},"list":[{"id":"a"}],"deleted":[]}"#)
        == "\"list\" entry 0 is damaged")
    #expect(
      refusal(
        #"{"format":2,"revision":1,"mode":"multi","sections":{},"list":[{"id":"a","title":"A","items":[1],"origin":"client"}],"deleted":[]}"#
      ) == "\"list\" entry 0 has a damaged item")
    #expect(
      refusal(#"{"format":2,"revision":1,"mode":"multi","sections":{},"list":[],"deleted":[1]}"#)
        == "\"deleted\" holds a non-string")
    #expect(
      refusal(#"{"format":1,"mode":"multi","sections":{}}"#)
        == "\"revision\" must be a whole number from 0 to 9223372036854775807")
    #expect(
      refusal(#"{"format":1,"revision":-1,"mode":"multi","sections":{}}"#)
        == "\"revision\" must be a whole number from 0 to 9223372036854775807")
    #expect(
      refusal(#"{"format":1,"revision":1.5,"mode":"multi","sections":{}}"#)
        == "\"revision\" must be a whole number from 0 to 9223372036854775807")
    #expect(refusal(#"{"format":1,"revision":1,"sections":{}}"#) == "\"mode\" is missing or unknown")
    #expect(
      refusal(#"{"format":1,"revision":1,"mode":"Multi","sections":{}}"#) == "\"mode\" is missing or unknown")
    #expect(refusal(#"{"format":1,"revision":1,"mode":"multi"}"#) == "\"sections\" is missing")
    #expect(refusal(#"{"format":1,"revision":1,"mode":"multi","sections":[]}"#) == "\"sections\" is missing")
    #expect(
      refusal(#"{"format":1,"revision":3,"mode":"multi","sections":{"a":4}}"#)
        == "section \"a\" has an invalid value 4")
    #expect(
      refusal(#"{"format":1,"revision":3,"mode":"multi","sections":{"a":-1}}"#)
        == "section \"a\" has an invalid value -1")
    #expect(
      refusal(#"{"format":1,"revision":3,"mode":"multi","sections":{"a":true}}"#)
        == "section \"a\" has an invalid value true")
    #expect(
      refusal(#"{"format":1,"revision":3,"mode":"multi","sections":{"a":"1"}}"#)
        == "section \"a\" has an invalid value \"1\"")
  }

  @Test func aTruncatedFileIsRefused() {
    let whole = SavedState.encode(sampleModel())
    for length in 0..<(whole.count - 1) {
      #expect(throws: ConfigError.self) { try SavedState.decode(whole[..<length]) }
    }
  }
}

/// The writer never produces a revision the reader refuses: the model stops at `maxRevision`.
@Suite struct SavedStateRevisionLimitTests {
  @Test func roundTripAtTheTopOfTheRange() throws {
    let top = SectionModel.maxRevision
    let model = SectionModel(
      config: abc(), saved: SavedState(revision: top, mode: .exclusive, sections: ["b": top]))
    let decoded = try SavedState.decode(SavedState.encode(model))
    #expect(decoded == SavedState(model))
    #expect(SectionModel(config: abc(), saved: decoded) == model)
  }

  @Test func aRevisionPastTheTopIsRefusedSayingWhy() {
    let message = SectionCoreTests.refusal { () throws(ConfigError) in
      _ = try SavedState.decode(
        Array(#"{"format":1,"revision":9223372036854775808,"mode":"multi","sections":{}}"#.utf8))
    }
    #expect(
      message?.contains("whole number from 0 to 9223372036854775807") == true, "\(message ?? "accepted")")
  }
}
