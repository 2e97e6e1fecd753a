import Foundation
import Sluice
import SluiceTestSupport
import Testing

/// A mapping changed between runs: before the fix a changed type left the
/// column as it was and every later run reported every row updated, and a
/// changed key failed mid-run with `UNIQUE constraint failed`.
@Suite struct MappingChangeTests {
    func mapping(_ type: String, key: String = "id") -> String {
        "entities: {E: {records: $, key: \(key), attributes: {id: integer, code: string, n: \(type)}}}"
    }

    let input = (1...50).map { #"{"id": \#($0), "code": "c\#($0)", "n": \#($0 * 7)}"# }.joined(separator: "\n")

    @Test(arguments: [ApplyOrder.key, .input]) func aChangedTypeIsMigratedAndConverges(order: ApplyOrder) throws {
        let store = newStore()
        var options = ImportOptions()
        options.order = order
        try sync(mapping("integer"), input, store: store, options: options)
        try sync(
            #"entities: {E: {records: $, key: id, attributes: {id: integer}}}"#, "{\"id\": 1}", store: store,
            options: options)
        let changed = try sync(mapping("string"), input, store: store, options: options)
        #expect(changed.warnings.contains { $0.contains("n INTEGER → TEXT") }, "\(changed.warnings)")
        let reader = StoreReader(store)
        #expect(reader.rows("SELECT type FROM pragma_table_info('E') WHERE name = 'n'") == [["TEXT"]])
        #expect(reader.value("SELECT typeof(n) || n FROM E WHERE id = 3") == "text21")
        #expect(changed[entity: "E"]?.updated == 0)
        let again = try sync(mapping("string"), input, store: store, options: options)
        // Found unchanged in input order; in key order not even parsed (record digests).
        let unchanged = options.order == .key ? again.unchangedRecords : again[entity: "E"]?.unchanged
        #expect(again[entity: "E"]?.updated == 0 && unchanged == 50)
        #expect(again.warnings.isEmpty)
        let back = try sync(mapping("integer"), input, store: store, options: options)
        #expect(back[entity: "E"]?.updated == 0)
        #expect(reader.value("SELECT typeof(n) FROM E WHERE id = 3") == "integer")
    }

    @Test func aChangedKeyIsRefusedBeforeAnyWrite() throws {
        let store = newStore()
        try sync(mapping("integer"), input, store: store)
        let before = StoreReader(store).rows("SELECT * FROM E ORDER BY id")
        do {
            try sync(mapping("integer", key: "code"), input, store: store)
            Issue.record("a changed key was accepted")
        } catch let error as ImportError {
            #expect("\(error)".contains("the table is keyed by (id) but the mapping's key is (code)"), "\(error)")
        }
        #expect(StoreReader(store).rows("SELECT * FROM E ORDER BY id") == before)
    }
}
