// What the library shares with the daemon (`Mode`, `ListName`, `SocketNames`, `ClientName`)
// comes with `import SectionClient`: the API returns and takes these types, so a program
// names them without importing a second module, and under one name only (a typealias would
// have given each two: `SectionClient.Mode` and `SectionShared.Mode`).
@_exported import SectionShared
