import Foundation
import Sluice
import SluiceTestSupport
import Testing

/// The rebuilt test cases of CoreStore (CS-*) from that library's own test suite.
@Suite struct CoreStoreCaseTests {
    let yaml = "entities: {E: {records: $, key: id, attributes: {id: integer, name: string}}}"

    @Test func cs1ShouldImportFalseSkipsInsertsAndUpdates() throws {
        let store = newStore()
        try importText(yaml, "a.jsonl", "{\"id\": 1, \"name\": \"old\"}\n", store: store)
        let skipAll = ["E": EntityHooks(shouldImport: { _ in false })]
        let report = try importText(
            yaml, "b.jsonl", "{\"id\": 1, \"name\": \"new\"}\n{\"id\": 2, \"name\": \"x\"}\n", store: store,
            hooks: skipAll)
        #expect(report[entity: "E"]?.skipped == 2)
        #expect(StoreReader(store).rows("SELECT id, name FROM E") == [["1", "old"]])
    }

    @Test func cs2SameKeyTwiceKeepsTheSecond() throws {
        let store = newStore()
        let report = try importText(
            yaml, "a.jsonl", "{\"id\": 7, \"name\": \"first\"}\n{\"id\": 7, \"name\": \"second\"}\n", store: store)
        #expect(report[entity: "E"]?.inserted == 1)
        #expect(report.fullPass == nil)
        #expect(StoreReader(store).rows("SELECT id, name FROM E") == [["7", "second"]])
    }

    @Test func cs3HooksSeeRecordsInSourceOrder() throws {
        let seen = OrderLog()
        let hooks = [
            "E": EntityHooks(didImport: { row in
                if case .integer(let id) = row["id"] { seen.add(Int(id)) }
            })
        ]
        let report = try importText(
            yaml, "a.jsonl", "{\"id\": 106}\n{\"id\": 107}\n{\"id\": 3}\n", store: newStore(), hooks: hooks)
        #expect(seen.values == [106, 107, 3])
        // A run whose hooks see every record keeps no record digests, and says so.
        #expect(report.fullPass == "record digests are off (E runs hooks)")
    }

    /// A hook that throws at record 4 stops the import; the records before
    /// it stay, the batch being filled included.
    @Test func cs4AThrowingHookStopsTheImportAndKeepsTheRecordsBeforeIt() throws {
        struct Refused: Error {}
        let store = newStore()
        let hooks = [
            "E": EntityHooks(willImport: { record in
                if record.text(at: "name") == "bad" { throw Refused() }
            })
        ]
        var options = ImportOptions()
        options.batch.maxRows = 2
        let lines = (1...5).map { "{\"id\": \($0), \"name\": \"\($0 == 4 ? "bad" : "ok")\"}" }.joined(separator: "\n")
        do {
            _ = try Importer(mapping: Mapping.parse(yaml: yaml), store: store, options: options, hooks: hooks)
                .runBlocking(inputs: [TestPaths.file("a.jsonl", lines)])
            Issue.record("the hook's error was lost")
        } catch {
            #expect("\(error)".contains("a hook failed"))
            #expect("\(error)".contains("record 4"))
        }
        #expect(StoreReader(store).rows("SELECT id FROM E ORDER BY id") == [["1"], ["2"], ["3"]])
    }

    @Test func hooksForUnknownEntitiesAreMappingErrors() {
        #expect(throws: ImportError.self) {
            try Importer(mapping: Mapping.parse(yaml: yaml), store: newStore(), hooks: ["Nope": EntityHooks()])
        }
    }
}

final class OrderLog: @unchecked Sendable {
    private let lock = NSLock()
    private var log: [Int] = []
    var values: [Int] { lock.withLock { log } }
    func add(_ value: Int) { lock.withLock { log.append(value) } }
}
