import SectionGrammar

/// The grammar's rows (`Grammar.rows`) as the parser and the request path read them on every
/// request (a form's arguments, and its `Form.Facts`): flat arrays
/// of plain values, indexed by verb, form and position, made once from the rows. Reading a
/// `Row` itself would copy its arrays of arguments (retained and released per request).
struct ParseTable {
  /// What the parser does with one argument of a form.
  enum Slot: UInt8 {
    /// Any word: a section (`Argument.section`, `.sectionOrAll`) or a new id, which the
    /// request reads as it needs (`ReadArguments`).
    case word
    /// A word that must be the form's keyword (`keywords` holds it): FROM, FRESH, NAME, INSERT.
    case keyword
    /// `exclusive` or `multi`.
    case mode
    /// A count; anything but a number is a word too many.
    case count
    /// A number: an index or a position.
    case number
    /// A number or `end`.
    case numberOrEnd
    /// The rest of the line.
    case text
    /// A revision: digits, at most 2^64-1.
    case revision
    /// A connection's name (`ClientName`).
    case clientName

    init(_ argument: Argument) {
      switch argument {
      case .section, .sectionOrAll, .id: self = .word
      case .keyword: self = .keyword
      case .mode: self = .mode
      case .count: self = .count
      case .index, .position: self = .number
      case .indexOrEnd, .positionOrEnd: self = .numberOrEnd
      case .text: self = .text
      case .revision: self = .revision
      case .clientName: self = .clientName
      }
    }
  }

  /// The most arguments a form takes (ITEM MOVE's four).
  static let maximumArguments = 4

  /// One form as the parser and the request path read it: a plain value of a few bytes,
  /// copied out of the table without retaining anything.
  struct Shape {
    /// What the daemon checks of a request of the form before it runs it.
    let facts: Form.Facts
    /// How many forms the verb has (the same in each of its shapes).
    var forms: Int { Int(formCount) }
    /// How many arguments the form takes.
    var count: Int { Int(argumentCount) }
    private let formCount: UInt8
    private let argumentCount: UInt8
    /// Each argument's `Slot`, a byte each, the first in the lowest.
    private let slots: UInt32

    init(forms: Int, _ form: Form) {
      let arguments = form.arguments
      precondition(arguments.count <= ParseTable.maximumArguments, "a form takes too many arguments")
      facts = form.facts
      formCount = UInt8(forms)
      argumentCount = UInt8(arguments.count)
      slots = arguments.enumerated().reduce(0) { $0 | UInt32(Slot($1.element).rawValue) << ($1.offset * 8) }
    }

    /// The kind of the argument at `position`.
    subscript(position: Int) -> Slot {
      Slot(rawValue: UInt8(truncatingIfNeeded: slots &>> UInt32(truncatingIfNeeded: position &* 8)))!
    }
  }

  /// Each verb's forms, `Grammar.maximumForms` a verb (a verb of fewer repeats its last).
  private let shapes: [Shape]
  /// The keyword where a slot is `.keyword` (upper case), "" elsewhere, `maximumArguments` a
  /// form: short strings, held inline, so reading one retains nothing.
  private let keywords: [String]

  private init(_ rows: [Row]) {
    precondition(rows.allSatisfy { $0.forms.count <= Grammar.maximumForms }, "a verb has too many forms")
    shapes = rows.flatMap { row in
      (0..<Grammar.maximumForms).map {
        Shape(forms: row.forms.count, row.forms[min($0, row.forms.count - 1)])
      }
    }
    keywords = rows.flatMap { row in
      (0..<Grammar.maximumForms).flatMap { form in
        (0..<ParseTable.maximumArguments).map { position -> String in
          let arguments = row.forms[min(form, row.forms.count - 1)].arguments
          guard position < arguments.count, case .keyword(let word) = arguments[position] else { return "" }
          return word
        }
      }
    }
  }

  /// The table of protocol 1, read through the static functions below (which borrow it, where
  /// a copy would retain its arrays).
  private static let grammar = ParseTable(Grammar.rows)

  /// Form `form` of `verb`.
  static func shape(_ verb: Verb, form: Int) -> Shape {
    grammar.shapes[verb.index &* Grammar.maximumForms &+ form]
  }

  /// The keyword the argument at `position` of the form must be.
  static func keyword(_ verb: Verb, form: Int, _ position: Int) -> String {
    grammar.keywords[(verb.index &* Grammar.maximumForms &+ form) &* maximumArguments &+ position]
  }
}
