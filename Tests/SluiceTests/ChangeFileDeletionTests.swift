import Sluice
import SluiceTestSupport
import Testing

/// Change files: records that say their key is gone delete it and its links.
@Suite struct ChangeFileDeletionTests {
    let yaml = """
        entities:
          E:
            records: $
            key: id
            delete-when: {op: {equals: d}}
            attributes: {id: integer, name: string}
            relationships:
              tags: {entity: T, source: "tags[*]", many: true, missing: stub}
          T:
            key: name
            attributes: {name: string}
        """

    @Test(arguments: [ApplyOrder.key, .input]) func tombstonesDeleteRowsAndLinksAndTheLastActionWins(order: ApplyOrder)
        throws
    {
        let store = newStore()
        var options = ImportOptions()
        options.order = order
        options.batch.maxRows = 3
        try sync(
            yaml, (1...6).map { #"{"id": \#($0), "name": "n\#($0)", "tags": ["a", "b"]}"# }.joined(separator: "\n"),
            store: store, options: options)
        let change = [
            #"{"id": 2, "op": "d"}"#,  // gone
            #"{"id": 3, "op": "d", "name": "ignored"}"#,  // gone, other fields ignored
            #"{"id": 4, "op": "d"}"#, #"{"id": 4, "name": "back", "tags": ["c"]}"#,  // deleted, then written again
            #"{"id": 7, "name": "new", "tags": ["a"]}"#, #"{"id": 7, "op": "d"}"#,  // written, then deleted
            #"{"id": 8, "op": "d"}"#,  // never stored
            #"{"id": 5, "name": "five"}"#,
        ].joined(separator: "\n")
        let report = try sync(yaml, change, store: store, options: options)
        // Key order sees each key's occurrences together: 2, 3 and 4 go (4
        // is then written again), 7 never reaches the table. In input order
        // 7 may be written by one batch and deleted by the next.
        if order == .key {
            #expect(report[entity: "E"]?.deleted == 3)
        } else {
            #expect((report[entity: "E"]?.deleted ?? 0) >= 3)
        }
        let reader = StoreReader(store)
        #expect(
            reader.rows("SELECT id, name FROM E ORDER BY id") == [
                ["1", "n1"], ["4", "back"], ["5", "five"], ["6", "n6"],
            ])
        #expect(
            reader.rows("SELECT E_id, T_name FROM E_tags ORDER BY 1, 2")
                == [["1", "a"], ["1", "b"], ["4", "c"], ["5", "a"], ["5", "b"], ["6", "a"], ["6", "b"]])
        // The same change again ends in the same store.
        let before = [reader.rows("SELECT * FROM E ORDER BY id"), reader.rows("SELECT * FROM E_tags ORDER BY 1, 2")]
        let again = try sync(yaml, change, store: store, options: options)
        #expect(
            [reader.rows("SELECT * FROM E ORDER BY id"), reader.rows("SELECT * FROM E_tags ORDER BY 1, 2")] == before)
        #expect(again[entity: "E"]?.updated == 0)
    }

    @Test func deletionsNeedAKeyAndTheirOwnPaths() {
        #expect(throws: MappingError.self) {
            try Mapping.parse(
                yaml: "entities: {E: {records: $, key: [], delete-when: {op: {equals: d}}, attributes: {a: string}}}")
        }
        #expect(throws: MappingError.self) {
            try Mapping.parse(
                yaml: "entities: {E: {records: /a/b, delete-records: /a/b, key: id, attributes: {id: integer}}}")
        }
    }
}
