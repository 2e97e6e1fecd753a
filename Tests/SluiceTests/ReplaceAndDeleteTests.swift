import Sluice
import SluiceTestSupport
import Testing

@Suite struct ReplaceAndDeleteTests {
    @Test(arguments: ["replace-and-delete", "replace"])
    func droppedChildrenAreDeletedOnlyWhenAsked(rule: String) throws {
        let yaml = """
            entities:
              Order: {records: $, key: id, attributes: {id: integer},
                      relationships: {lines: {entity: Line, source: "lines[*]", many: true, rule: \(rule)}}}
              Line: {key: id, attributes: {id: integer, qty: integer}}
            """
        let store = newStore()
        try importText(
            yaml, "a.jsonl",
            """
            {"id": 1, "lines": [{"id": 10, "qty": 1}, {"id": 11, "qty": 2}, {"id": 12, "qty": 3}]}
            {"id": 2, "lines": [{"id": 20, "qty": 1}]}
            """, store: store)
        try importText(
            yaml, "b.jsonl", #"{"id": 1, "lines": [{"id": 11, "qty": 2}, {"id": 12, "qty": 5}]}"#, store: store)
        let reader = StoreReader(store)
        #expect(reader.rows("SELECT Line_id FROM Order_lines ORDER BY 1").map { $0[0] } == ["11", "12", "20"])
        let expected = rule == "replace" ? ["10", "11", "12", "20"] : ["11", "12", "20"]
        #expect(reader.rows("SELECT id FROM Line ORDER BY id").map { $0[0] } == expected)
        #expect(reader.value("SELECT qty FROM Line WHERE id = 12") == "5")
    }

    @Test func orderedXMLListsDeleteDroppedChildren() throws {
        let yaml = """
            entities:
              Way: {records: /osm/way, key: id, attributes: {id: integer},
                    relationships: {nodes: {entity: Node, source: "nd[*]", many: true, ordered: true, rule: replace-and-delete}}}
              Node: {key: id, attributes: {id: {type: integer, source: "@ref"}}}
            """
        let store = newStore()
        try importText(
            yaml, "a.xml", #"<osm><way id="1"><nd ref="5" x="1"/><nd ref="6" x="1"/></way></osm>"#, store: store)
        try importText(yaml, "b.xml", #"<osm><way id="1"><nd ref="6" x="1"/></way></osm>"#, store: store)
        #expect(StoreReader(store).rows("SELECT id FROM Node").map { $0[0] } == ["6"])
        #expect(StoreReader(store).rows("SELECT Node_id FROM Way_nodes").map { $0[0] } == ["6"])
    }
}
