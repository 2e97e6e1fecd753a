import Benchmark
import Foundation
import Sluice

/// Records per benchmark iteration (throughput figures count iterations).
let recordCount = 20_000

/// The import path, end to end and per stage (parse, record assembly and
/// mapping, key-ordered sort, batch apply), on generated events shaped like
/// ../shared/bench/gen.py's (integer key in shuffled order, ten scalars).
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
        blackHole(try Stages.assemble(Fixtures.jsonLines).count)
    }

    Benchmark("Key-ordered sort: rows spilled to runs and merged") { _ in
        let sorter = KeyOrderSorter(directory: Fixtures.directory.path, options: SortOptions())
        for group in Fixtures.groups { try sorter.add(group) }
        var rows = 0
        for name in sorter.applyOrder {
            guard let chunks = try sorter.chunks(of: name, rows: 5_000) else { continue }
            while let batch = try chunks.next() { rows += batch.rows.rowCount }
        }
        blackHole(rows)
    }

    Benchmark("Batch apply into SQLite, input order") { benchmark in
        let store = try SQLiteStore(path: Fixtures.freshStore())
        try store.prepare(Fixtures.compiled.mappers.map(\.schema), links: Fixtures.compiled.links)
        benchmark.startMeasurement()
        for group in Fixtures.groups { blackHole(try store.apply(group)) }
    }
}

/// The import's stages run on their own, below the public `Importer`.
enum Stages {
    /// Parses JSON Lines at `path` in 64 KiB chunks through the record
    /// assembler and the batcher; returns the batch groups cut.
    static func assemble(_ path: String) throws -> [BatchGroup] {
        let batcher = Batcher(mappers: Fixtures.compiled.mappers, links: Fixtures.compiled.links, limits: BatchLimits())
        var groups: [BatchGroup] = []
        var records = 0
        batcher.onFull = { full in
            groups.append(full.cut(checkpoint: Checkpoint(input: path, records: records, bytes: 0), rawBytes: 0, records: records))
        }
        let assembler = RecordAssembler(routes: Fixtures.compiled.routes, sink: batcher)
        let parser = JSONPushParser(handler: assembler, name: path, multipleValues: true)
        let bytes = try Data(contentsOf: URL(fileURLWithPath: path))
        try bytes.withUnsafeBytes { raw in
            var start = 0
            while start < raw.count {
                let end = min(raw.count, start + (64 << 10))
                try parser.feed(UnsafeRawBufferPointer(rebasing: raw[start..<end]))
                records = assembler.recordCount
                start = end
            }
        }
        try parser.finish()
        if !batcher.isEmpty {
            groups.append(batcher.cut(checkpoint: Checkpoint(input: path, records: records, bytes: 0), rawBytes: 0, records: records))
        }
        return groups
    }
}

/// Generated inputs, written once per process.
enum Fixtures {
    static let directory: URL = {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("sluice-bench-\(getpid())")
        try? FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        return url
    }()

    static let mapping = try! Mapping.parse(yaml: """
        entities:
          Event:
            records: $
            key: id
            attributes: {id: integer, type: string, created_at: date, public: boolean, score: integer,
                         ratio: double, repo: string, lang: string, title: string, body: string}
        """)

    /// Benchmarks run one at a time, so the mappers (classes) are not shared.
    nonisolated(unsafe) static let compiled = try! CompiledMapping(mapping)

    /// The JSON Lines fixture's batch groups, made once.
    static let groups: [BatchGroup] = try! Stages.assemble(jsonLines)

    static let xmlMapping = try! Mapping.parse(yaml: """
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
            text += #"{"id": \#(key(index)), "type": "PushEvent", "created_at": "2024-05-01T12:34:\#(index % 60 < 10 ? "0" : "")\#(index % 60)Z", "public": \#(index % 3 == 0), "score": \#(index % 1000), "ratio": \#(Double(index) / 7), "repo": "owner/repo-\#(index % 500)", "lang": \#(index % 5 == 0 ? "null" : "\"swift\""), "title": "commit fix merge update \#(index)", "body": "the body of record \#(index) with some words in it"}"# + "\n"
        }
        let path = directory.appendingPathComponent("events.jsonl").path
        _ = FileManager.default.createFile(atPath: path, contents: Data(text.utf8))
        return path
    }()

    static let xml: String = {
        var text = "<events>\n"
        for index in 0..<recordCount {
            text += #"<event id="\#(key(index))" type="PushEvent" created_at="2024-05-01T12:34:56Z" public="\#(index % 3 == 0)" score="\#(index % 1000)" ratio="\#(Double(index) / 7)" repo="owner/repo-\#(index % 500)" lang="swift" title="commit fix merge update \#(index)"><body>the body of record \#(index) with some words in it</body></event>"# + "\n"
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
