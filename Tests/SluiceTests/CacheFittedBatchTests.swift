import Foundation
import SluiceTestSupport
import Testing

@testable import Sluice

/// The key-ordered apply cuts a table's batches so that the pages each
/// transaction writes fit the SQLite page cache (`CacheFittedRows`).
@Suite struct CacheFittedBatchTests {
    let mapping = try! Mapping.parse(
        yaml: """
            entities:
              Event:
                records: $
                key: id
                attributes: {id: integer, body: string, score: integer}
                relationships:
                  tags: {entity: Tag, source: "tags[*]", many: true, missing: stub}
              Tag:
                key: name
                attributes: {name: string}
            """)

    /// Events `ids`, each with a body of 1,500 bytes, so that two fill a
    /// page of 4 KiB and an update of every other one writes a page each.
    func events(_ ids: some Sequence<Int>, score: Int, name: String) -> String {
        let body = String(repeating: "b", count: 1_500)
        let lines = ids.map { #"{"id": \#($0), "body": "\#(body)", "score": \#(score), "tags": ["t\#($0 % 3)"]}"# }
        return TestPaths.file(name, lines.joined(separator: "\n") + "\n")
    }

    /// Each batch of `table` the key-ordered apply committed, in rows, from
    /// the progress reports (one after each batch, with the rows applied).
    final class Batches: @unchecked Sendable {
        private let lock = NSLock()
        private var applied = 0
        private var sizes: [String: [Int]] = [:]
        func add(_ progress: ImportProgress) {
            guard progress.phase == .applying, let table = progress.table else { return }
            lock.withLock {
                sizes[table, default: []].append(progress.rowsApplied - applied)
                applied = progress.rowsApplied
            }
        }
        func of(_ table: String) -> [Int] { lock.withLock { sizes[table] ?? [] } }
    }

    /// Applies 3,000 updates (every other event of 6,000) to `store`, with a
    /// page cache of `cacheBytes`, and returns the Event batches' rows.
    func update(_ store: String, cacheBytes: Int) throws -> [Int] {
        var options = ImportOptions()
        options.store.pageSize = 4_096
        options.store.pageCacheBytes = cacheBytes
        options.batch.maxBytes = 256 << 20
        let changes = events(stride(from: 2, through: 6_000, by: 2), score: 2, name: "changes.jsonl")
        let batches = Batches()
        let report = try Importer(mapping: mapping, store: store, options: options)
            .runBlocking(inputs: [changes], progress: { batches.add($0) })
        #expect(report[entity: "Event"]?.updated == 3_000)
        return batches.of("Event")
    }

    @Test func scatteredUpdatesGoInBatchesThatFitTheCache() throws {
        let directory = TestPaths.temporaryDirectory()
        let store = directory.appendingPathComponent("small.sqlite").path
        var options = ImportOptions()
        options.store.pageSize = 4_096
        // Batches bounded by rows alone (their bytes would cut them at 2 MiB).
        options.batch.maxBytes = 256 << 20
        let base = events(1...6_000, score: 1, name: "base.jsonl")
        let first = Batches()
        _ = try Importer(mapping: mapping, store: store, options: options)
            .runBlocking(inputs: [base], progress: { first.add($0) })
        // Into an empty table rows append: the batches keep their 5,000 rows.
        #expect(first.of("Event") == [5_000, 1_000])
        let large = directory.appendingPathComponent("large.sqlite").path
        try FileManager.default.copyItem(atPath: store, toPath: large)

        // 1 MiB of 4 KiB pages is 256 pages: after the first batches (256
        // rows; the third may be cut once the first is measured), each
        // holds what writes half of it, a page or more a row.
        let small = try update(store, cacheBytes: 1 << 20)
        #expect(small.reduce(0, +) == 3_000)
        #expect(Array(small.prefix(2)) == [256, 256] && small.allSatisfy { $0 <= 256 }, "\(small)")
        #expect(small.dropFirst(3).allSatisfy { $0 <= 128 } && small.count > 10, "\(small)")
        // 16 MiB: the same updates in larger batches, the same rows.
        let wide = try update(large, cacheBytes: 16 << 20)
        #expect(wide.reduce(0, +) == 3_000)
        #expect(wide.count < small.count, "\(wide) against \(small)")
        for (table, order) in [("Event", "1"), ("Event_tags", "1, 2"), ("Tag", "1")] {
            let sql = "SELECT * FROM \"\(table)\" ORDER BY \(order)"
            #expect(StoreReader(store).rows(sql) == StoreReader(large).rows(sql), "\(table) differs")
        }
        #expect(StoreReader(store).value("SELECT count(*) FROM Event WHERE score = 2") == "3000")
    }

    @Test func theBoundWritesHalfTheCacheAtTheMeasuredPagesPerRow() {
        // The 2,000,000-event change file: 5,000 scattered rows, 5,400 pages.
        #expect(CacheFittedRows(table: "E", applied: 5_000, wrote: 5_400, cachePages: 512, maxRows: 5_000).rows == 237)
        // Appends write a page per tens of rows: the batch limit stands.
        #expect(CacheFittedRows(table: "E", applied: 5_000, wrote: 90, cachePages: 512, maxRows: 5_000).rows == 5_000)
        // Unchanged rows write nothing: the batches grow four times at most.
        #expect(CacheFittedRows(table: "E", applied: 256, wrote: 0, cachePages: 512, maxRows: 5_000).rows == 1_024)
        // A row of several MiB writes hundreds of pages: 16 rows at least.
        #expect(CacheFittedRows(table: "E", applied: 2, wrote: 2_000, cachePages: 512, maxRows: 5_000).rows == 16)
    }
}
