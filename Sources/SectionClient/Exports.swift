// What the library shares with the daemon (`Mode`, `ListName`, `SocketNames`, `ClientName`)
// comes with `import SectionClient`: the API returns and takes these types, so a program
// names them without importing a second module, and under one name only (a typealias would
// have given each two: `SectionClient.Mode` and `SectionShared.Mode`).
@_exported import SectionShared
// The protocol's grammar (`Verb`, `Row`, `Argument`) comes the same way: `SendLine.argument`
// answers with a row's `Row.Offer`, and a program that offers the protocol's words (a prompt,
// a completion) reads the same table the daemon parses with.
@_exported import SectionGrammar
