import Sluice
import SluiceTestSupport
import Testing

@Suite struct WriteModeTests {
    let base =
        "entities: {E: {records: $, key: id, attributes: {id: integer, name: string, note: {type: string, default: d}}}}"

    func withMode(_ mode: String) -> String {
        "entities: {E: {records: $, key: id, mode: \(mode), attributes: {id: integer, name: string, note: {type: string, default: d}}}}"
    }

    @Test func insertOnlyKeepsEditsAndAddsNewKeys() throws {
        let store = newStore()
        try sync(base, lines(1...3), store: store)
        let report = try sync(withMode("insert-only"), lines(2...5) { "changed\($0)" }, store: store)
        #expect(report[entity: "E"]?.inserted == 2)
        #expect(report[entity: "E"]?.updated == 0)
        #expect(
            StoreReader(store).rows("SELECT name FROM E ORDER BY id").map { $0[0] } == [
                "n1", "n2", "n3", "changed4", "changed5",
            ])
    }

    @Test func updateOnlySkipsNewKeys() throws {
        let store = newStore()
        try sync(base, lines(1...3), store: store)
        let report = try sync(withMode("update-only"), lines(2...5) { "changed\($0)" }, store: store)
        #expect(report[entity: "E"]?.updated == 2)
        #expect(report[entity: "E"]?.skipped == 2)
        #expect(
            StoreReader(store).rows("SELECT name FROM E ORDER BY id").map { $0[0] } == ["n1", "changed2", "changed3"])
    }

    @Test func replaceResetsAbsentFieldsToTheirDefault() throws {
        let store = newStore()
        try sync(base, "{\"id\": 1, \"name\": \"a\", \"note\": \"kept?\"}", store: store)
        var report = try sync(withMode("replace"), "{\"id\": 1, \"name\": \"a\"}", store: store)
        #expect(report[entity: "E"]?.updated == 1)
        #expect(StoreReader(store).rows("SELECT name, note FROM E") == [["a", "d"]])
        report = try sync(withMode("replace"), "{\"id\": 1, \"name\": \"a\"}", store: store)
        // The same record under the same mapping: not even parsed (record digests).
        #expect(report.unchangedRecords == 1 && report[entity: "E"]?.updated == 0)
    }

    @Test func runModeAppliesWhereTheMappingSetsNone() throws {
        let store = newStore()
        try sync(base, lines(1...2), store: store)
        var options = ImportOptions()
        options.store.mode = .insertOnly
        let report = try sync(base, lines(1...3) { "x\($0)" }, store: store, options: options)
        #expect(report[entity: "E"]?.inserted == 1 && report[entity: "E"]?.unchanged == 2)
    }

    @Test func overwriteListsWhatAnUpdateMayChange() throws {
        let store = newStore()
        let yaml =
            "entities: {E: {records: $, key: id, overwrite: [name], attributes: {id: integer, name: string, note: string}}}"
        try sync(yaml, "{\"id\": 1, \"name\": \"a\", \"note\": \"first\"}", store: store)
        var report = try sync(yaml, "{\"id\": 1, \"name\": \"b\", \"note\": \"second\"}", store: store)
        #expect(report[entity: "E"]?.updated == 1)
        report = try sync(yaml, "{\"id\": 1, \"name\": \"b\", \"note\": \"third\"}", store: store)
        #expect(report[entity: "E"]?.unchanged == 1)
        #expect(StoreReader(store).rows("SELECT name, note FROM E") == [["b", "first"]])
    }
}
