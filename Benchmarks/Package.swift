// swift-tools-version: 6.1
//
// sluice's benchmarks, a package of their own so that ordo-one/benchmark and
// its plugin never enter the main build. Run from this folder:
//   swift package benchmark
import PackageDescription

let package = Package(
    name: "sluice-benchmarks",
    platforms: [.macOS(.v15)],
    dependencies: [
        .package(name: "sluice", path: ".."),
        .package(url: "https://github.com/ordo-one/benchmark", exact: "1.38.1", traits: ["MallocInterposer"]),
    ],
    targets: [
        .executableTarget(
            name: "ImportBenchmarks",
            dependencies: [
                .product(name: "Sluice", package: "sluice"),
                .product(name: "Benchmark", package: "benchmark"),
            ],
            path: "Benchmarks/ImportBenchmarks",
            plugins: [.plugin(name: "BenchmarkPlugin", package: "benchmark")])
    ]
)
