import Foundation
import Sluice
import SluiceTestSupport
import Testing

/// Nested objects of entities without a key (`keyless: reuse | create`).
@Suite struct KeylessNestedTests {
    func pages(_ rule: String) -> String {
        """
        entities:
          Page: {records: $, key: id, attributes: {id: integer},
                 relationships: {revision: {entity: Revision, source: revision, keyless: \(rule)}}}
          Revision: {key: [], attributes: {text: string, minor: boolean}}
        """
    }

    @Test func reuseUpdatesTheRowLinkedFromTheSameParent() throws {
        let store = newStore()
        let first = (1...3).map { "{\"id\": \($0), \"revision\": {\"text\": \"v1 of \($0)\"}}" }.joined(separator: "\n")
        let report = try importText(pages("reuse"), "p.jsonl", first, store: store)
        #expect(report[entity: "Revision"]?.inserted == 3)
        let second = "{\"id\": 2, \"revision\": {\"text\": \"v2 of 2\", \"minor\": true}}"
        let again = try importText(pages("reuse"), "p.jsonl", second, store: store)
        #expect(again[entity: "Revision"]?.updated == 1)
        #expect(again[entity: "Revision"]?.inserted == 0)
        let reader = StoreReader(store)
        #expect(reader.count("Revision") == 3)
        #expect(
            reader.rows(
                "SELECT p.id, r.text, r.minor FROM Page p JOIN Revision r ON r._sluice_key = p.revision ORDER BY p.id")
                == [["1", "v1 of 1", nil], ["2", "v2 of 2", "1"], ["3", "v1 of 3", nil]])
        #expect(again.dangling.isEmpty)
    }

    @Test func createAddsARowEachTimeAndLinksTheNewest() throws {
        let store = newStore()
        try importText(pages("create"), "p.jsonl", "{\"id\": 1, \"revision\": {\"text\": \"a\"}}", store: store)
        try importText(pages("create"), "p.jsonl", "{\"id\": 1, \"revision\": {\"text\": \"b\"}}", store: store)
        let reader = StoreReader(store)
        #expect(reader.rows("SELECT text FROM Revision ORDER BY text") == [["a"], ["b"]])
        #expect(reader.rows("SELECT r.text FROM Page p JOIN Revision r ON r._sluice_key = p.revision") == [["b"]])
    }

    @Test func nullClearsAndAbsentKeepsTheLink() throws {
        let store = newStore()
        try importText(
            pages("reuse"), "p.jsonl",
            "{\"id\": 1, \"revision\": {\"text\": \"a\"}}\n{\"id\": 2, \"revision\": {\"text\": \"b\"}}", store: store)
        try importText(pages("reuse"), "p.jsonl", "{\"id\": 1, \"revision\": null}\n{\"id\": 2}", store: store)
        #expect(
            StoreReader(store).rows("SELECT id, revision IS NULL FROM Page ORDER BY id") == [["1", "1"], ["2", "0"]])
    }

    @Test func keylessListsOnXMLReuseByPositionAndDeleteDroppedChildren() throws {
        let yaml = """
            entities:
              Order: {records: /orders/order, key: "@id", attributes: {"@id": integer},
                      relationships: {lines: {entity: Line, source: "line[*]", many: true, ordered: true,
                                              rule: replace-and-delete, keyless: reuse}}}
              Line: {key: [], attributes: {sku: {type: string, source: "@sku"}, qty: {type: integer, source: "@qty"}}}
            """
        let store = newStore()
        try importText(
            yaml, "o.xml",
            """
            <orders><order id="1"><line sku="a" qty="1"/><line sku="b" qty="2"/><line sku="c" qty="3"/></order>
            <order id="2"><line sku="z" qty="9"/></order></orders>
            """, store: store)
        let report = try importText(
            yaml, "o.xml", #"<orders><order id="1"><line sku="a" qty="5"/></order></orders>"#, store: store)
        #expect(report[entity: "Line"]?.updated == 1)
        let reader = StoreReader(store)
        #expect(
            reader.rows(
                "SELECT o.\"Order_@id\", l.sku, l.qty FROM Order_lines o JOIN Line l ON l._sluice_key = o.Line__sluice_key ORDER BY 1, o.position"
            )
                == [["1", "a", "5"], ["2", "z", "9"]])
        #expect(reader.count("Line") == 2)
    }

    @Test func scalarItemsInAKeylessListAreAnError() throws {
        let yaml = """
            entities:
              Order: {records: $, key: id, attributes: {id: integer},
                      relationships: {lines: {entity: Line, source: "lines[*]", many: true, keyless: create}}}
              Line: {key: [], attributes: {sku: string}}
            """
        do {
            try importText(yaml, "o.jsonl", "{\"id\": 1, \"lines\": [{\"sku\": \"a\"}, 7]}", store: newStore())
            Issue.record("a scalar in a keyless list passed")
        } catch {
            #expect("\(error)".contains("item 2 is not an object"), "\(error)")
        }
    }

    @Test func mappingErrorsAboutKeylessTargets() {
        let cases = [
            (
                "entities: {P: {records: $, key: id, attributes: {id: integer}, relationships: {r: {entity: R, source: r}}}, R: {key: [], attributes: {a: string}}}",
                "has no key"
            ),
            (
                "entities: {P: {records: $, key: id, attributes: {id: integer}, relationships: {r: {entity: R, source: r, keyless: reuse}}}, R: {key: a, attributes: {a: string}}}",
                "is for targets without a key"
            ),
            (
                "entities: {P: {records: $, key: id, attributes: {id: integer}, relationships: {r: {entity: R, source: r, keyless: reuse}}}, R: {records: \"$.r\", key: [], attributes: {a: string}}}",
                "records of its own"
            ),
            (
                "entities: {P: {records: $, key: id, attributes: {id: integer}, relationships: {r: {entity: R, source: r, keyless: sometimes}}}, R: {key: [], attributes: {a: string}}}",
                "reuse or create"
            ),
        ]
        for (yaml, message) in cases {
            do {
                _ = try CompiledMapping(Mapping.parse(yaml: yaml))
                Issue.record("accepted: \(yaml)")
            } catch {
                #expect("\(error)".contains(message), "\(error)")
            }
        }
    }
}
