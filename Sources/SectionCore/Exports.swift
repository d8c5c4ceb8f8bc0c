// The names the daemon shares with the library (`Mode`, `ListName`, `SocketNames`,
// `ClientName`) come with `import SectionCore`, as they did before they moved to
// SectionShared: the daemon's modules and tests name them without a second import.
@_exported import SectionShared
