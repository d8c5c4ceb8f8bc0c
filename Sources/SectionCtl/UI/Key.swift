/// One thing a person did at the terminal, decoded from the bytes it sent.
enum Key: Equatable, Sendable {
  case up, down, left, right, pageUp, pageDown, home, end, enter, escape
  /// The Delete key (ESC [ 3 ~), for the prompt line.
  case delete
  /// Ctrl and a letter other than C, H, J and M (which are keys of their own), by the letter
  /// in upper case: `.control("U")` is Ctrl-U.
  case control(Character)
  /// Ctrl-C: in raw mode it arrives as a byte, not as SIGINT.
  case interrupt
  /// Backspace (DEL or Ctrl-H), for the prompt line.
  case backspace
  /// A printable character, space included.
  case character(Character)
  /// A mouse report (xterm SGR mode 1006); `row` and `column` count from 0.
  case mouse(MouseAction, row: Int, column: Int)
}

/// What the mouse did, from the button number and final byte of an SGR report.
enum MouseAction: Equatable, Sendable {
  /// A button went down: 0 left, 1 middle, 2 right.
  case press(button: Int)
  case release
  case wheelUp, wheelDown
}
