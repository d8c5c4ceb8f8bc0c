/// One client's side of the conversation, which the service keeps no copy of: the face hands it
/// in with each request (`SectionService.handle`, `execute`), as it hands in the client's open
/// `Batch`. A socket connection keeps one for its life, a bus call makes one of its caller's
/// rights and credentials; `CLIENT NAME` changes the session it came in, and so only the
/// changes made after it in that session.
public struct Session {
  /// What the client may do, and whether it is the read-only socket's (a bus caller allowed to
  /// change state is `.control`).
  public let access: SectionService.Access
  /// Who makes the changes of the session's requests, for the history.
  public var author: Author

  public init(access: SectionService.Access, author: Author) {
    self.access = access
    self.author = author
  }
}
