// swift-tools-version: 6.1
//
// An app's package that depends on sluice by path, as a user's would, for
// AppPackageTests (Tests/SluiceCLITests): `App` must build and run with
// `import Sluice` alone, naming every public type of the library;
// `Machinery` names the pipeline's machinery and must fail to build;
// `AppTests` holds an app's expectations of the library (issue 29, points
// 1–4: cancellation, what a cancel keeps, errors, types), which
// AppBehaviourTests runs.
import PackageDescription

let package = Package(
    name: "sluice-app-fixture",
    dependencies: [.package(name: "sluice", path: "../../..")],
    targets: [
        .executableTarget(name: "App", dependencies: [.product(name: "Sluice", package: "sluice")]),
        .target(name: "Machinery", dependencies: [.product(name: "Sluice", package: "sluice")]),
        .testTarget(name: "AppTests", dependencies: [.product(name: "Sluice", package: "sluice")]),
    ],
    swiftLanguageModes: [.v6]
)
