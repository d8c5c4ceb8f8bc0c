// swift-tools-version:6.0
// An example program on SectionClient, built from this checkout: what a program that uses
// sectiond looks like. Tests/System/suites/client-library.sh builds and runs it in CI.
import PackageDescription

let package = Package(
  name: "accordion",
  dependencies: [.package(name: "sectiond", path: "../..")],
  targets: [
    .executableTarget(
      name: "accordion", dependencies: [.product(name: "SectionClient", package: "sectiond")])
  ]
)
