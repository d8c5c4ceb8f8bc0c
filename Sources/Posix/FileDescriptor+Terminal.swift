import Glibc

extension FileDescriptor {
  /// True when the descriptor is a terminal: decides whether output may carry colour and redraws.
  public var isTerminal: Bool { isatty(rawValue) == 1 }
}
