import Sluice
import SluiceTestSupport
import Testing

/// Several occurrences of a key in one run merge as updates across runs do:
/// absent fields keep their value, present ones win, the last occurrence
/// last. Before the fix the later occurrence replaced the row whole, so a
/// bare nested reference wiped the fields of the record it named.
@Suite struct RepeatedKeyTests {
    let people = """
        entities:
          Person:
            records: $[*]
            key: id
            attributes: {id: integer, name: string}
            relationships:
              friend: {entity: Person, source: friend}
        """

    func importing(_ yaml: String, _ json: String, order: ApplyOrder, mode: WriteMode = .upsert) throws -> String {
        let store = newStore()
        var options = ImportOptions()
        options.order = order
        options.store.mode = mode
        _ = try Importer(mapping: Mapping.parse(yaml: yaml), store: store, options: options).runBlocking(inputs: [
            TestPaths.file("in.json", json)
        ])
        return store
    }

    @Test(arguments: [ApplyOrder.key, .input]) func aBareNestedReferenceKeepsTheFieldsOfItsRecord(order: ApplyOrder)
        throws
    {
        for json in [
            #"[{"id":1,"name":"Ann"},{"id":2,"name":"Bob","friend":{"id":1}}]"#,
            #"[{"id":2,"name":"Bob","friend":{"id":1}},{"id":1,"name":"Ann"}]"#,
        ] {
            let store = try importing(people, json, order: order)
            #expect(
                StoreReader(store).rows("SELECT id, name, friend FROM Person ORDER BY id") == [
                    ["1", "Ann", nil], ["2", "Bob", "1"],
                ], "\(json)")
        }
    }

    @Test(arguments: [ApplyOrder.key, .input]) func reciprocalGraphsKeepBothSides(order: ApplyOrder) throws {
        let yaml = """
            entities:
              Player:
                records: $[*]
                key: id
                attributes: {id: integer, name: string}
                relationships:
                  group: {entity: Group, source: group}
              Group:
                key: id
                attributes: {id: integer, title: string}
                relationships:
                  players: {entity: Player, source: "players[*]", many: true}
            """
        let json = #"[{"id":1,"name":"p1","group":{"id":7,"title":"g","players":[{"id":1},{"id":2}]}}]"#
        let store = try importing(yaml, json, order: order)
        let reader = StoreReader(store)
        #expect(
            reader.rows("SELECT id, name, \"group\" FROM Player ORDER BY id") == [["1", "p1", "7"], ["2", nil, nil]])
        #expect(reader.rows("SELECT id, title FROM \"Group\"") == [["7", "g"]])
    }

    @Test(arguments: [ApplyOrder.key, .input]) func laterPresentFieldsWinAndReplaceKeepsTheLastWhole(order: ApplyOrder)
        throws
    {
        let json = #"[{"id":1,"name":"Ann"},{"id":1,"friend":{"id":2}},{"id":1,"name":"Anna"},{"id":2,"name":"Bo"}]"#
        let merged = try importing(people, json, order: order)
        #expect(
            StoreReader(merged).rows("SELECT id, name, friend FROM Person ORDER BY id") == [
                ["1", "Anna", "2"], ["2", "Bo", nil],
            ])
        let replaced = try importing(people, json, order: order, mode: .replace)
        #expect(
            StoreReader(replaced).rows("SELECT id, name, friend FROM Person ORDER BY id") == [
                ["1", "Anna", nil], ["2", "Bo", nil],
            ])
    }
}
