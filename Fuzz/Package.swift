// swift-tools-version: 6.1
//
// sluice's libFuzzer target, a package of its own so that coverage
// instrumentation never enters the main build. Run from the repository:
//   scripts/fuzz.sh [seconds]
import PackageDescription

let package = Package(
    name: "sluice-fuzz",
    dependencies: [.package(name: "sluice", path: "..")],
    targets: [
        .executableTarget(
            name: "SluiceFuzzer",
            dependencies: [.product(name: "Sluice", package: "sluice")],
            linkerSettings: [.unsafeFlags(["-sanitize=fuzzer", "-use-ld=lld"])])
    ],
    swiftLanguageModes: [.v6]
)
