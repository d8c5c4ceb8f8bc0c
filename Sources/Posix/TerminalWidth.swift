import CShim
import Glibc

/// Character widths as the terminal counts them: the C library's tables under the user's locale.
public enum TerminalWidth {
  /// Sets LC_CTYPE from the environment (LC_ALL, LC_CTYPE, LANG), as a terminal program must
  /// before asking for widths; done once, the first time a width is asked for.
  private static let localeIsSet: Bool = setlocale(LC_CTYPE, "") != nil

  /// The cells `scalar` takes: 0, 1 or 2; nil when the locale cannot print it (as `wcwidth`'s -1).
  public static func of(_ scalar: Unicode.Scalar) -> Int? {
    _ = localeIsSet
    let cells = cshim_wcwidth(scalar.value)
    return cells < 0 ? nil : Int(cells)
  }
}
