import Foundation
import Sluice
import SluiceTestSupport
import Testing

@Suite struct DeleteMissingTests {
    let yaml = "entities: {E: {records: $, key: id, attributes: {id: integer, name: string, note: string}}}"

    var deleting: ImportOptions {
        var options = ImportOptions()
        options.store.deleteMissing = true
        options.batch.maxRows = 100
        return options
    }

    @Test func removingTenPercentOfRecordsDeletesExactlyThose() throws {
        let store = newStore()
        try sync(yaml, lines(1...1_000), store: store)
        let kept = (1...1_000).filter { $0 % 10 != 3 }
        let report = try sync(yaml, lines(kept), store: store, options: deleting)
        #expect(report[entity: "E"]?.deleted == 100)
        // The 900 records the first run kept are not even parsed (record digests), and count as seen.
        #expect(report.unchangedRecords == 900)
        let reader = StoreReader(store)
        #expect(reader.count("E") == 900)
        #expect(reader.value("SELECT count(*) FROM E WHERE id % 10 = 3") == "0")
        #expect(reader.value("SELECT count(*) FROM sqlite_schema WHERE name LIKE '_sluice_seen_%'") == "0")
    }

    @Test func aTruncatedInputDeletesNothingAndFails() throws {
        let store = newStore()
        try sync(yaml, lines(1...1_000), store: store)
        let cut = String(lines(1...1_000).prefix(20_000))
        #expect(throws: ImportError.self) { try sync(yaml, cut, store: store, options: deleting) }
        #expect(StoreReader(store).count("E") == 1_000)
        let status = try Status.read(store: store)
        #expect(status.runs.first?.status == .failed)
        #expect(status.runs.first?.error?.contains("in.jsonl:") == true)
    }

    @Test func anEntityWithNoRecordsIsNotWipedUnlessAllowed() throws {
        let two = """
            entities:
              E: {records: $, key: id, filter: {kind: {equals: e}}, attributes: {id: integer, kind: string}}
              F: {records: $, key: id, filter: {kind: {equals: f}}, attributes: {id: integer, kind: string}}
            """
        let store = newStore()
        try sync(two, "{\"id\": 1, \"kind\": \"e\"}\n{\"id\": 2, \"kind\": \"f\"}", store: store)
        var report = try sync(two, "{\"id\": 1, \"kind\": \"e\"}", store: store, options: deleting)
        #expect(report[entity: "F"]?.deleted == 0)
        #expect(report.warnings.count == 1 && report.warnings[0].contains("F"))
        var allow = deleting
        allow.allowEmptyDelete = true
        report = try sync(two, "{\"id\": 1, \"kind\": \"e\"}", store: store, options: allow)
        #expect(report[entity: "F"]?.deleted == 1)
    }

    @Test func scopeLimitsWhatIsDeletedAndEntitiesCanOptOut() throws {
        let scoped = """
            entities:
              E: {records: $, key: id, delete-missing: true, delete-scope: {region: {equals: north}},
                  attributes: {id: integer, region: string}}
              F: {records: $, key: id, delete-missing: false, attributes: {id: integer, region: string}}
            """
        let store = newStore()
        let all = (1...6).map { "{\"id\": \($0), \"region\": \"\($0 <= 3 ? "north" : "south")\"}" }.joined(
            separator: "\n")
        try sync(scoped, all, store: store)
        let report = try sync(scoped, "{\"id\": 1, \"region\": \"north\"}", store: store)
        #expect(report[entity: "E"]?.deleted == 2)
        #expect(report[entity: "F"]?.deleted == 0)
        #expect(StoreReader(store).rows("SELECT id FROM E ORDER BY id").map { $0[0] } == ["1", "4", "5", "6"])
        #expect(StoreReader(store).count("F") == 6)
    }

    @Test func deleteMissingNeedsAKey() {
        #expect(throws: MappingError.self) {
            try Mapping.parse(
                yaml: "entities: {E: {records: $, key: [], delete-missing: true, attributes: {a: string}}}")
        }
    }
}
