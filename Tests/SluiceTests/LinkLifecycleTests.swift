import Sluice
import SluiceTestSupport
import Testing

@Suite struct LinkLifecycleTests {
    @Test func deletedSourcesTakeTheirLinksAlongSoAReturningSourceStartsClean() throws {
        let yaml = """
            entities:
              Group: {records: $, key: id, attributes: {id: integer},
                      relationships: {members: {entity: Person, source: "members[*]", many: true}}}
              Person: {key: id, attributes: {id: integer}}
            """
        let store = newStore()
        try importText(yaml, "a.jsonl", "{\"id\": 1, \"members\": [1, 2]}\n{\"id\": 2, \"members\": [3]}", store: store)
        var options = ImportOptions()
        options.store.deleteMissing = true
        let report = try Importer(mapping: Mapping.parse(yaml: yaml), store: store, options: options)
            .runBlocking(inputs: [TestPaths.file("b.jsonl", "{\"id\": 2, \"members\": [3]}")])
        #expect(report[entity: "Group"]?.deleted == 1)
        let reader = StoreReader(store)
        #expect(reader.rows("SELECT Group_id, Person_id FROM Group_members ORDER BY 1, 2") == [["2", "3"]])
        try importText(yaml, "c.jsonl", "{\"id\": 1, \"members\": [5]}", store: store)
        #expect(
            reader.rows("SELECT Group_id, Person_id FROM Group_members ORDER BY 1, 2") == [["1", "5"], ["2", "3"]])
    }
}
