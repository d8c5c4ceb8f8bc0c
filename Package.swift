// swift-tools-version:6.0
import PackageDescription

/// Release builds of the request path skip Swift's run-time exclusivity checks: callgrind put
/// them at a sixth of a TOGGLE's instructions. Debug builds, which every test runs, keep them,
/// and the compile-time checks stay on everywhere.
let hotPath: [SwiftSetting] = [
  .unsafeFlags(["-enforce-exclusivity=unchecked"], .when(configuration: .release))
]

let package = Package(
  name: "sectiond",
  products: [
    .executable(name: "sectiond", targets: ["sectiond"]),
    .executable(name: "sectionctl", targets: ["sectionctl"]),
  ],
  targets: [
    // libsystemd, through pkg-config. Only the `Systemd` module imports it.
    .systemLibrary(
      name: "CSystemd", pkgConfig: "libsystemd", providers: [.apt(["libsystemd-dev"])]),
    // The few libc calls Swift cannot reach without _GNU_SOURCE (accept4, SO_PEERCRED).
    .target(name: "CShim", cSettings: [.define("_GNU_SOURCE")]),
    // Typed wrappers over every raw POSIX call the project makes.
    .target(name: "Posix", dependencies: ["CShim"]),
    // The model, the config, the protocol: pure, no I/O.
    .target(name: "SectionCore", swiftSettings: hotPath),
    // The one place that calls libsystemd: sd-event, sd_notify, socket activation.
    .target(name: "Systemd", dependencies: ["CSystemd", "Posix"]),
    // The daemon's I/O layer: listeners, connections, the state file, the command line.
    .target(
      name: "SectionServer", dependencies: ["SectionCore", "Posix", "Systemd"], swiftSettings: hotPath),
    // The client side of protocol 1 and the sectionctl command line.
    .target(name: "SectionCtl", dependencies: ["Posix", "SectionCore"]),
    .executableTarget(name: "sectiond", dependencies: ["SectionServer"]),
    .executableTarget(name: "sectionctl", dependencies: ["SectionCtl"]),
    .testTarget(name: "SectionCoreTests", dependencies: ["SectionCore"]),
    .testTarget(name: "SectionCtlTests", dependencies: ["SectionCtl"]),
    .testTarget(name: "IntegrationTests", dependencies: ["Posix"]),
  ],
  swiftLanguageModes: [.v6]
)
