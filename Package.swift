// swift-tools-version: 6.1
//
// sluice: a streaming importer that keeps a SQLite or PostgreSQL store in step with a
// multi-gigabyte XML or JSON dump. The stages are modules and depend on each
// other in one direction only:
//
//   SluiceInput → SluiceParsers → SluiceRecords → SluiceBatching → SluiceStore (SQLite, PostgreSQL)
//                                                                      ↓
//                                               Sluice (public API) → sluice (CLI)
import PackageDescription

/// A system library found through pkg-config, installed from Debian's `-dev`
/// package of the same purpose.
func systemLibrary(_ name: String, pkgConfig: String?, apt: String) -> Target {
    .systemLibrary(
        name: name,
        path: "Sources/\(name)",
        pkgConfig: pkgConfig,
        providers: [.apt([apt])])
}

let package = Package(
    name: "sluice",
    platforms: [.macOS(.v14)],
    products: [
        .library(name: "Sluice", targets: ["Sluice"]),
        .executable(name: "sluice", targets: ["SluiceCLI"]),
        .executable(name: "sluice-library-example", targets: ["LibraryExample"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
        .package(url: "https://github.com/jpsim/Yams", from: "6.2.2"),
        // `swift package generate-documentation --target Sluice` (the DocC catalog).
        .package(url: "https://github.com/swiftlang/swift-docc-plugin", from: "1.5.0"),
    ],
    targets: [
        systemLibrary("CSluiceXML2", pkgConfig: "libxml-2.0", apt: "libxml2-dev"),
        systemLibrary("CSluiceYAJL", pkgConfig: "yajl", apt: "libyajl-dev"),
        systemLibrary("CSluiceSQLite3", pkgConfig: "sqlite3", apt: "libsqlite3-dev"),
        systemLibrary("CSluiceZlib", pkgConfig: "zlib", apt: "zlib1g-dev"),
        systemLibrary("CSluiceBZip2", pkgConfig: nil, apt: "libbz2-dev"),
        systemLibrary("CSluiceZstd", pkgConfig: "libzstd", apt: "libzstd-dev"),
        systemLibrary("CSluiceLZMA", pkgConfig: "liblzma", apt: "liblzma-dev"),
        systemLibrary("CSluiceMalloc", pkgConfig: nil, apt: "libc6-dev"),
        systemLibrary("CSluiceCores", pkgConfig: nil, apt: "libc6-dev"),
        systemLibrary("CSluicePQ", pkgConfig: "libpq", apt: "libpq-dev"),
        systemLibrary("CSluiceCrypto", pkgConfig: "libcrypto", apt: "libssl-dev"),

        .target(
            name: "SluiceInput",
            dependencies: ["CSluiceZlib", "CSluiceBZip2", "CSluiceZstd", "CSluiceLZMA"]),
        .target(
            name: "SluiceParsers",
            dependencies: ["SluiceInput", "CSluiceXML2", "CSluiceYAJL"]),
        .target(
            name: "SluiceRecords",
            dependencies: [
                "SluiceInput", "SluiceParsers", "CSluiceCrypto", .product(name: "Yams", package: "Yams"),
            ]),
        .target(
            name: "SluiceBatching",
            dependencies: ["SluiceInput", "SluiceRecords", "CSluiceZstd"]),
        // The SQLite VFS that gathers a store's WAL writes (CSluiceSQLiteWAL.h).
        .target(name: "CSluiceSQLiteWAL", dependencies: ["CSluiceSQLite3"]),
        .target(
            name: "SluiceStore",
            dependencies: ["SluiceInput", "SluiceBatching", "CSluiceSQLite3", "CSluiceSQLiteWAL", "CSluicePQ"]),
        .target(
            name: "Sluice",
            dependencies: [
                "SluiceInput", "SluiceParsers", "SluiceRecords", "SluiceBatching", "SluiceStore", "CSluiceCores",
            ]),
        .executableTarget(
            name: "SluiceCLI",
            dependencies: [
                "Sluice", "CSluiceMalloc", .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ]),
        // A program embedding the library, as a user's would (run by a test).
        .executableTarget(name: "LibraryExample", dependencies: ["Sluice"], path: "Examples/Library"),

        // The power-loss SQLite VFS (PowerLossTests): test support, never in the product.
        .target(name: "CSluiceTestVFS", dependencies: ["CSluiceSQLite3"], path: "Tests/CSluiceTestVFS"),
        .target(
            name: "SluiceTestSupport", dependencies: ["Sluice", "CSluiceSQLite3", "CSluicePQ"],
            path: "Tests/SluiceTestSupport"),
        .testTarget(name: "SluiceInputTests", dependencies: ["SluiceInput", "SluiceTestSupport"]),
        .testTarget(name: "SluiceParsersTests", dependencies: ["SluiceParsers", "SluiceTestSupport"]),
        .testTarget(name: "SluiceRecordsTests", dependencies: ["SluiceRecords", "SluiceTestSupport"]),
        .testTarget(name: "SluiceBatchingTests", dependencies: ["SluiceBatching", "SluiceTestSupport"]),
        .testTarget(name: "SluiceStoreTests", dependencies: ["SluiceStore", "SluiceTestSupport"]),
        .testTarget(
            name: "SluiceTests", dependencies: ["Sluice", "SluiceTestSupport", "CSluiceTestVFS", "CSluiceSQLiteWAL"]),
        .testTarget(name: "SluiceCLITests", dependencies: ["SluiceCLI", "LibraryExample", "SluiceTestSupport"]),
    ],
    swiftLanguageModes: [.v6]
)
