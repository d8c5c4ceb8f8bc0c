import Systemd

/// Sends STATUS= when the figures change, at most four times a second.
final class StatusReporter {
  private let line: () -> String
  private var timer: EventSource?
  private var armed = false
  private var lastSent = ""

  init(loop: EventLoop, line: @escaping () -> String) throws {
    self.line = line
    timer = try loop.timer(after: 250_000) { [unowned self] in self.send() }
    timer?.setEnabled(false)
  }

  func figuresChanged() {
    guard Notifier.isActive, !armed else { return }
    armed = true
    timer?.rearm(after: 250_000)
  }

  private func send() {
    armed = false
    let current = line()
    guard current != lastSent else { return }
    lastSent = current
    Notifier.status(current)
  }
}
