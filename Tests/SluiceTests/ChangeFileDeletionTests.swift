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

    /// A source's links go row by row by the link table's whole key
    /// (`SQLiteStore.LinkDeletes`): a key of two columns, an ordered list
    /// with a repeated target (keyed by position) and an unordered one, each
    /// emptied by a deletion and replaced by a changed list, in both orders.
    @Test(arguments: [ApplyOrder.key, .input]) func deletedAndChangedSourcesLoseEveryLinkOfEachKind(
        order: ApplyOrder
    ) throws {
        let yaml = """
            entities:
              R:
                records: $
                key: [a, b]
                delete-when: {op: {equals: d}}
                attributes: {a: integer, b: string, name: string}
                relationships:
                  path: {entity: T, source: "path[*]", many: true, ordered: true, missing: stub}
                  tags: {entity: T, source: "tags[*]", many: true, missing: stub}
              T:
                key: name
                attributes: {name: string}
            """
        let store = newStore()
        var options = ImportOptions()
        options.order = order
        options.batch.maxRows = 2
        try sync(
            yaml,
            (1...4).map { #"{"a": \#($0), "b": "x", "path": ["p", "q", "p"], "tags": ["s", "t"]}"# }.joined(
                separator: "\n"),
            store: store, options: options)
        let change = [
            #"{"a": 1, "b": "x", "op": "d"}"#,
            #"{"a": 2, "b": "x", "path": ["q"], "tags": ["t", "u"]}"#,
            #"{"a": 3, "b": "x", "op": "d"}"#,
        ].joined(separator: "\n")
        let report = try sync(yaml, change, store: store, options: options)
        let links = Dictionary(uniqueKeysWithValues: report.tables.map { ($0.name, $0) })
        // 1 and 3 lose 3 + 2 links each; 2's lists differ, so both go whole.
        #expect(links["R_path"]?.deleted == 9)
        #expect(links["R_tags"]?.deleted == 6)
        #expect(links["R_path"]?.inserted == 1)
        #expect(links["R_tags"]?.inserted == 2)
        let reader = StoreReader(store)
        #expect(reader.rows("SELECT a, b FROM R ORDER BY a") == [["2", "x"], ["4", "x"]])
        #expect(
            reader.rows("SELECT R_a, R_b, T_name FROM R_path ORDER BY R_a, position")
                == [["2", "x", "q"], ["4", "x", "p"], ["4", "x", "q"], ["4", "x", "p"]])
        #expect(
            reader.rows("SELECT R_a, T_name FROM R_tags ORDER BY R_a, T_name")
                == [["2", "t"], ["2", "u"], ["4", "s"], ["4", "t"]])
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
