import Benchmark
import Foundation
@_spi(Benchmarks) import Sluice

/// Records per benchmark iteration (throughput figures count iterations).
let recordCount = 20_000

/// The import path, end to end and per stage (parse, record assembly and
/// mapping, key-ordered sort, batch apply), on generated events shaped like
/// Benchmarks/events.py's (integer key in shuffled order, ten scalars).
let benchmarks: @Sendable () -> Void = {
    Benchmark.defaultConfiguration = .init(
        metrics: [.wallClock, .cpuTotal, .throughput, .mallocCountTotal, .peakMemoryResident],
        maxDuration: .seconds(10), maxIterations: 20)

    Benchmark("JSON Lines import, new store") { benchmark in
        let store = Fixtures.freshStore()
        benchmark.startMeasurement()
        blackHole(try Importer(mapping: Fixtures.mapping, store: store).runBlocking(inputs: [Fixtures.jsonLines]))
    }

    Benchmark("JSON Lines re-import, nothing changed") { benchmark in
        let store = Fixtures.freshStore()
        _ = try Importer(mapping: Fixtures.mapping, store: store).runBlocking(inputs: [Fixtures.jsonLines])
        benchmark.startMeasurement()
        blackHole(try Importer(mapping: Fixtures.mapping, store: store).runBlocking(inputs: [Fixtures.jsonLines]))
    }

    Benchmark("XML import, new store") { benchmark in
        let store = Fixtures.freshStore()
        benchmark.startMeasurement()
        blackHole(try Importer(mapping: Fixtures.xmlMapping, store: store).runBlocking(inputs: [Fixtures.xml]))
    }

    Benchmark("JSON Lines parse only") { _ in
        blackHole(try Checker.check(path: Fixtures.jsonLines, format: .jsonl))
    }

    Benchmark("XML parse only") { _ in
        blackHole(try Checker.check(path: Fixtures.xml, format: .xml))
    }

    Benchmark("JSON Lines record assembly and mapping, no store") { _ in
        blackHole(try StageBenchmarks(mapping: Fixtures.mapping).assemble(jsonLines: Fixtures.jsonLines))
    }

    Benchmark("Key-ordered sort: rows spilled to runs and merged") { _ in
        blackHole(try Fixtures.stages.sortAndMerge(directory: Fixtures.directory.path))
    }

    Benchmark("Batch apply into SQLite, input order") { benchmark in
        let store = try Fixtures.stages.prepareStore(at: Fixtures.freshStore())
        benchmark.startMeasurement()
        blackHole(try Fixtures.stages.apply(to: store))
    }
}

/// Generated inputs, written once per process.
enum Fixtures {
    static let directory: URL = {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("sluice-bench-\(getpid())")
        try? FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        return url
    }()

    static let mapping = try! Mapping.parse(
        yaml: """
            entities:
              Event:
                records: $
                key: id
                attributes: {id: integer, type: string, created_at: date, public: boolean, score: integer,
                             ratio: double, repo: string, lang: string, title: string, body: string}
            """)

    /// The JSON Lines fixture assembled into batch groups once; benchmarks
    /// run one at a time, so the stages (classes) are not shared.
    nonisolated(unsafe) static let stages: StageBenchmarks = {
        let stages = try! StageBenchmarks(mapping: mapping)
        _ = try! stages.assemble(jsonLines: jsonLines)
        return stages
    }()

    static let xmlMapping = try! Mapping.parse(
        yaml: """
            entities:
              Event:
                records: /events/event
                key: id
                attributes: {id: integer, type: string, created_at: date, public: boolean, score: integer,
                             ratio: double, repo: string, lang: string, title: string, body: string}
            """)

    /// Shuffled keys: a multiplicative permutation of 0..<recordCount.
    static func key(_ index: Int) -> Int { (index * 7_919 + 13) % recordCount }

    static let jsonLines: String = {
        var text = ""
        for index in 0..<recordCount {
            text +=
                #"{"id": \#(key(index)), "type": "PushEvent", "created_at": "2024-05-01T12:34:\#(index % 60 < 10 ? "0" : "")\#(index % 60)Z", "public": \#(index % 3 == 0), "score": \#(index % 1000), "ratio": \#(Double(index) / 7), "repo": "owner/repo-\#(index % 500)", "lang": \#(index % 5 == 0 ? "null" : "\"swift\""), "title": "commit fix merge update \#(index)", "body": "the body of record \#(index) with some words in it"}"#
                + "\n"
        }
        let path = directory.appendingPathComponent("events.jsonl").path
        _ = FileManager.default.createFile(atPath: path, contents: Data(text.utf8))
        return path
    }()

    static let xml: String = {
        var text = "<events>\n"
        for index in 0..<recordCount {
            text +=
                #"<event id="\#(key(index))" type="PushEvent" created_at="2024-05-01T12:34:56Z" public="\#(index % 3 == 0)" score="\#(index % 1000)" ratio="\#(Double(index) / 7)" repo="owner/repo-\#(index % 500)" lang="swift" title="commit fix merge update \#(index)"><body>the body of record \#(index) with some words in it</body></event>"#
                + "\n"
        }
        text += "</events>\n"
        let path = directory.appendingPathComponent("events.xml").path
        _ = FileManager.default.createFile(atPath: path, contents: Data(text.utf8))
        return path
    }()

    /// A path for a store that does not exist yet.
    static func freshStore() -> String {
        directory.appendingPathComponent("store-\(UUID().uuidString).sqlite").path
    }
}
