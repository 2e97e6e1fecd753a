@_spi(Machinery) import SluiceRecords
import Foundation
import Sluice
import SluiceTestSupport
import Testing

let stackExchange = ["Posts", "Users", "Comments", "Votes", "Badges", "Tags", "PostLinks", "PostHistory"]
let entityOf = ["Posts": "Post", "Users": "User", "Comments": "Comment", "Votes": "Vote", "Badges": "Badge",
                "Tags": "Tag", "PostLinks": "PostLink", "PostHistory": "PostHistory"]

func example(_ name: String) throws -> Mapping {
    try Mapping.load(path: TestPaths.repository.appendingPathComponent("Examples/\(name)/mapping.yml").path)
}

func stackExchangeFiles(in folder: String = TestPaths.corpus("stackexchange/french.meta")) -> [String] {
    stackExchange.map { "\(folder)/\($0).xml" }
}

/// Decompresses the GH Archive hour into a temporary JSON Lines file.
func gharchiveLines() throws -> String {
    let path = TestPaths.temporaryDirectory().appendingPathComponent("hour.jsonl").path
    let result = try runCommand("/bin/sh", ["-c", "gzip -dc '\(TestPaths.corpus("json/2015-01-01-12.json.gz"))' > '\(path)'"])
    #expect(result.status == 0)
    return path
}

@Suite(.serialized) struct StackExchangeTests {
    @Test func importsEveryRowThenNothingChangesThenOneUpdate() throws {
        let store = TestPaths.temporaryDirectory().appendingPathComponent("se.sqlite").path
        let importer = try Importer(mapping: example("stackexchange"), store: store)
        let first = try importer.runBlocking(inputs: stackExchangeFiles())
        let reader = StoreReader(store)
        for file in stackExchange {
            let rows = countOccurrences(of: "<row ", inFile: "\(TestPaths.corpus("stackexchange/french.meta"))/\(file).xml")
            let entity = entityOf[file]!
            #expect(rows > 0)
            #expect(first[entity: entity]?.inserted == rows, "\(entity)")
            #expect(reader.count(entity) == rows, "\(entity)")
        }
        #expect(first.records == 15_249)
        // Every post owner, comment author and linked post resolves; votes on
        // 119 deleted posts and 6 post links to deleted posts do not.
        #expect(first.dangling == ["Vote.PostId": 119, "PostLink.PostId": 6])
        #expect(reader.value("SELECT count(*) FROM Post p JOIN User u ON u.Id = p.OwnerUserId") == "748")
        #expect(reader.value("SELECT Id FROM User ORDER BY Id LIMIT 1") == "-1")
        #expect(reader.value("SELECT Text FROM Comment WHERE Id = 1")?.hasPrefix("The problem in EL&U is") == true)

        let second = try importer.runBlocking(inputs: stackExchangeFiles())
        for (name, counts) in second.entities {
            #expect(counts.inserted == 0 && counts.updated == 0, "\(name)")
            #expect(counts.unchanged == first[entity: name]?.inserted, "\(name)")
        }

        // Change one attribute of one row in a copy of Tags.xml.
        let copy = TestPaths.temporaryDirectory().appendingPathComponent("Tags.xml")
        let original = try String(contentsOfFile: TestPaths.corpus("stackexchange/french.meta/Tags.xml"), encoding: .utf8)
        let changed = original.replacingOccurrences(of: #"TagName="bug" Count="11""#, with: #"TagName="bug" Count="12""#)
        #expect(changed != original)
        try changed.write(to: copy, atomically: true, encoding: .utf8)
        let third = try importer.runBlocking(inputs: [copy.path])
        #expect(third[entity: "Tag"]?.updated == 1)
        #expect(third[entity: "Tag"]?.unchanged == 93)
        #expect(reader.value("SELECT Count FROM Tag WHERE TagName = 'bug'") == "12")
    }

    @Test func oneByteChunksGiveTheSameStore() throws {
        let files = ["Tags", "PostLinks", "Badges"].map { TestPaths.corpus("stackexchange/french.meta/\($0).xml") }
        var stores: [String] = []
        for chunk in [1, 65_536] {
            var options = ImportOptions()
            options.chunkSize = chunk
            options.batch.maxRows = 500
            let store = TestPaths.temporaryDirectory().appendingPathComponent("c\(chunk).sqlite").path
            let report = try Importer(mapping: example("stackexchange"), store: store, options: options).runBlocking(inputs: files)
            #expect(report.records == 94 + 134 + 4_002)
            stores.append(store)
        }
        for table in ["Tag", "PostLink", "Badge"] {
            let sql = "SELECT * FROM \(table) ORDER BY Id"
            #expect(StoreReader(stores[0]).rows(sql) == StoreReader(stores[1]).rows(sql))
        }
    }

    @Test func olderDumpWithFewerAttributesImports() throws {
        let store = TestPaths.temporaryDirectory().appendingPathComponent("beer.sqlite").path
        let report = try Importer(mapping: example("stackexchange"), store: store)
            .runBlocking(inputs: [TestPaths.corpus("stackexchange/beer/Posts.xml")])
        #expect(report[entity: "Post"]?.inserted == countOccurrences(of: "<row ", inFile: TestPaths.corpus("stackexchange/beer/Posts.xml")))
        #expect(StoreReader(store).value("SELECT count(*) FROM Post WHERE ContentLicense IS NOT NULL") == "0")
    }
}

@Suite(.serialized) struct GHArchiveTests {
    @Test func oneEventPerLine() throws {
        let lines = try gharchiveLines()
        let lineCount = countOccurrences(of: "\n", inFile: lines)
        #expect(lineCount == 8_273)
        let store = TestPaths.temporaryDirectory().appendingPathComponent("gh.sqlite").path
        let report = try Importer(mapping: example("gharchive"), store: store).runBlocking(inputs: [lines])
        #expect(report[entity: "Event"]?.inserted == lineCount)
        let reader = StoreReader(store)
        #expect(reader.count("Event") == lineCount)
        #expect(reader.rows("""
            SELECT e.id, e.type, a.login, r.name, e.created_at FROM Event e
            JOIN Actor a ON a.id = e.actor JOIN Repo r ON r.id = e.repo WHERE e.id = '2489582589'
            """) == [["2489582589", "WatchEvent", "kevinvanhove", "kevinvanhove/cssobjects", "2015-01-01 12:00:01"]])
        #expect(reader.value("SELECT count(*) FROM Event WHERE org IS NOT NULL") == "2238")
        // Actors, repositories and organisations are created once each.
        #expect(reader.count("Actor") == Int(reader.value("SELECT count(DISTINCT actor) FROM Event") ?? ""))
        #expect(reader.count("Repo") == Int(reader.value("SELECT count(DISTINCT repo) FROM Event") ?? ""))
        #expect(reader.count("Org") == Int(reader.value("SELECT count(DISTINCT org) FROM Event") ?? ""))
        #expect(report.dangling.isEmpty)
    }

    @Test func compressedInputGivesTheSameRows() throws {
        let plain = TestPaths.temporaryDirectory().appendingPathComponent("p.sqlite").path
        let packed = TestPaths.temporaryDirectory().appendingPathComponent("z.sqlite").path
        _ = try Importer(mapping: example("gharchive"), store: plain).runBlocking(inputs: [gharchiveLines()])
        _ = try Importer(mapping: example("gharchive"), store: packed).runBlocking(inputs: [TestPaths.corpus("json/2015-01-01-12.json.gz")])
        let sql = "SELECT * FROM Event ORDER BY id"
        #expect(StoreReader(plain).rows(sql) == StoreReader(packed).rows(sql))
    }
}

@Suite struct LibraryAPITests {
    let mapping = try! Mapping.parse(yaml: "entities: {Item: {records: $, key: id, attributes: {id: integer, name: string}}}")

    @Test func pushedBytesImportLikeAFile() throws {
        let store = TestPaths.temporaryDirectory().appendingPathComponent("push.sqlite").path
        let push = try Importer(mapping: mapping, store: store).startPush(name: "network", format: .jsonl)
        let text = (1...1_000).map { "{\"id\": \($0), \"name\": \"n\($0)\"}\n" }.joined()
        let bytes = Array(text.utf8)
        for start in stride(from: 0, to: bytes.count, by: 333) {
            try push.push(Array(bytes[start..<min(start + 333, bytes.count)]))
        }
        let report = try push.finish()
        #expect(report[entity: "Item"]?.inserted == 1_000)
        #expect(StoreReader(store).count("Item") == 1_000)
    }

    @Test func asyncRunReportsProgressAndCounts() async throws {
        let input = TestPaths.file("items.jsonl", (1...5_000).map { "{\"id\": \($0), \"name\": \"n\($0)\"}\n" }.joined())
        let store = TestPaths.temporaryDirectory().appendingPathComponent("async.sqlite").path
        var options = ImportOptions()
        options.batch.maxRows = 1_000
        let seen = ProgressLog()
        let report = try await Importer(mapping: mapping, store: store, options: options)
            .run(inputs: [input], progress: { seen.add($0.phase == .reading ? $0.records : -($0.rowsApplied)) })
        #expect(report.records == 5_000)
        // Reading: one report per group of 1,000 records; then the key-ordered
        // apply, one per batch of rows applied; then counting and done.
        #expect(seen.values.prefix(5) == [1_000, 2_000, 3_000, 4_000, 5_000])
        #expect(seen.values.dropFirst(5).prefix(5) == [-1_000, -2_000, -3_000, -4_000, -5_000])
        #expect(seen.values.suffix(2) == [-5_000, -5_000])
    }

    @Test func badRecordKeepsEarlierBatchesAndNamesTheRecord() throws {
        var lines = (1...3_000).map { "{\"id\": \($0), \"name\": \"n\($0)\"}" }
        lines[2_499] = "{\"id\": \"oops\", \"name\": 1}"
        let input = TestPaths.file("bad.jsonl", lines.joined(separator: "\n"))
        let store = TestPaths.temporaryDirectory().appendingPathComponent("bad.sqlite").path
        var options = ImportOptions()
        options.batch.maxRows = 1_000
        do {
            _ = try Importer(mapping: mapping, store: store, options: options).runBlocking(inputs: [input])
            Issue.record("a bad record was imported")
        } catch {
            guard case .parse(let parseError) = error else { Issue.record("wrong error \(error)"); return }
            #expect(parseError.location.record == 2_500)
            #expect(parseError.location.line == 2_500)
            #expect("\(error)".contains("bad.jsonl:2500:"))
            #expect("\(error)".contains("record 2500"))
        }
        #expect(StoreReader(store).count("Item") == 2_000)
    }

    @Test func cancellationStopsAndKeepsCommittedBatches() async throws {
        let input = TestPaths.file("many.jsonl", (1...200_000).map { "{\"id\": \($0), \"name\": \"n\($0)\"}\n" }.joined())
        let store = TestPaths.temporaryDirectory().appendingPathComponent("cancel.sqlite").path
        var options = ImportOptions()
        options.batch.maxRows = 1_000
        let importer = try Importer(mapping: mapping, store: store, options: options)
        let task = Task { try await importer.run(inputs: [input]) }
        try await Task.sleep(nanoseconds: 50_000_000)
        task.cancel()
        let result = await task.result
        if case .failure(let error) = result {
            #expect("\(error)".contains("cancelled"))
            let count = StoreReader(store).count("Item")
            #expect(count % 1_000 == 0 && count < 200_000)
        }
    }

    @Test func schemalessImportAddsColumnsAsTheyAppear() throws {
        let input = TestPaths.file("flat.jsonl", """
            {"id": 1, "a": "x"}
            {"id": 2, "b": 2.5, "nested": {"k": [1, 2]}}
            {"id": 1, "a": "y", "flag": true}
            """)
        let store = TestPaths.temporaryDirectory().appendingPathComponent("flat.sqlite").path
        let report = try Importer(entity: "Thing", key: "id", store: store).runBlocking(inputs: [input])
        #expect(report[entity: "Thing"]?.inserted == 2)
        #expect(StoreReader(store).rows("SELECT id, a, b, nested, flag FROM Thing ORDER BY id")
            == [["1", "y", nil, nil, "1"], ["2", nil, "2.5", #"{"k":[1,2]}"#, nil]])
    }
}

final class ProgressLog: @unchecked Sendable {
    private let lock = NSLock()
    private var log: [Int] = []
    var values: [Int] { lock.withLock { log } }
    func add(_ value: Int) { lock.withLock { log.append(value) } }
}
