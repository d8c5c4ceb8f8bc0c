/// Whether changes may be made now: the commit backend's word, which the service reads at each
/// change. The backend owns it (it alone knows whether a commit, or its own catching up, is
/// under way, or whether it can commit at all) and the service is handed the same object, so
/// that a change pays one look at two fields and the backend no call into the service.
public final class ChangeGate {
  /// The unsaved changes are on their way to be committed elsewhere and may wait seconds for
  /// it: no change joins them, every change waits for their outcome (`.deferred`), and reads
  /// are answered from the state as last committed meanwhile.
  public var sealed = false
  /// Every change is refused with it, until it is nil again (the backend cannot commit: not
  /// joined yet, or its store unreachable). Reads are answered still.
  public var refusal: ProtocolError?

  public init() {}
}
