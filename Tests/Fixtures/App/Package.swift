// swift-tools-version: 6.1
//
// An app's package that depends on sluice by path, as a user's would, for
// AppPackageTests (Tests/SluiceCLITests): `App` must build and run with
// `import Sluice` alone, naming every public type of the library;
// `Machinery` names the pipeline's machinery and must fail to build.
import PackageDescription

let package = Package(
    name: "sluice-app-fixture",
    dependencies: [.package(name: "sluice", path: "../../..")],
    targets: [
        .executableTarget(name: "App", dependencies: [.product(name: "Sluice", package: "sluice")]),
        .target(name: "Machinery", dependencies: [.product(name: "Sluice", package: "sluice")]),
    ],
    swiftLanguageModes: [.v6]
)
