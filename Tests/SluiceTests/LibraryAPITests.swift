import Foundation
import Sluice
import SluiceTestSupport
import Testing

@Suite struct LibraryAPITests {
    let mapping = try! Mapping.parse(
        yaml: "entities: {Item: {records: $, key: id, attributes: {id: integer, name: string}}}")

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
        let input = TestPaths.file(
            "items.jsonl", (1...5_000).map { "{\"id\": \($0), \"name\": \"n\($0)\"}\n" }.joined())
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

    /// A record whose key does not convert fails the run at its place; the
    /// 2,499 records before it stay, the batch being filled included.
    @Test func badRecordKeepsTheRecordsBeforeItAndNamesIt() throws {
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
            guard case .parse(let parseError) = error else {
                Issue.record("wrong error \(error)")
                return
            }
            #expect(parseError.location.record == 2_500)
            #expect(parseError.location.line == 2_500)
            #expect("\(error)".contains("bad.jsonl:2500:"))
            #expect("\(error)".contains("record 2500"))
        }
        #expect(StoreReader(store).count("Item") == 2_499)
    }

    @Test func cancellationStopsAndKeepsCommittedBatches() async throws {
        let input = TestPaths.file(
            "many.jsonl", (1...200_000).map { "{\"id\": \($0), \"name\": \"n\($0)\"}\n" }.joined())
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
        let input = TestPaths.file(
            "flat.jsonl",
            """
            {"id": 1, "a": "x"}
            {"id": 2, "b": 2.5, "nested": {"k": [1, 2]}}
            {"id": 1, "a": "y", "flag": true}
            """)
        let store = TestPaths.temporaryDirectory().appendingPathComponent("flat.sqlite").path
        let report = try Importer(entity: "Thing", key: "id", store: store).runBlocking(inputs: [input])
        #expect(report[entity: "Thing"]?.inserted == 2)
        #expect(
            StoreReader(store).rows("SELECT id, a, b, nested, flag FROM Thing ORDER BY id")
                == [["1", "y", nil, nil, "1"], ["2", nil, "2.5", #"{"k":[1,2]}"#, nil]])
    }
}

final class ProgressLog: @unchecked Sendable {
    private let lock = NSLock()
    private var log: [Int] = []
    var values: [Int] { lock.withLock { log } }
    func add(_ value: Int) { lock.withLock { log.append(value) } }
}
