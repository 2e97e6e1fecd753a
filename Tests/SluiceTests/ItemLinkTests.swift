import Foundation
import Sluice
import SluiceTestSupport
import Testing

/// To-many links read from items that name their target's entity and carry
/// link attributes (OSM relation members).
@Suite struct ItemLinkTests {
    let xmlMapping = """
        entities:
          Node: {records: /osm/node, key: "@id", attributes: {"@id": integer}}
          Way: {records: /osm/way, key: "@id", attributes: {"@id": integer}}
          Relation:
            records: /osm/relation
            key: "@id"
            attributes: {"@id": integer}
            relationships:
              members: {source: "member[*]", many: true, ordered: true, key: "@ref", entity-by: "@type",
                        entities: {node: Node, way: Way, relation: Relation}, attributes: {role: string}}
        """

    @Test func membersLinkToTheirEntityInOrderWithRoles() throws {
        let store = newStore()
        let report = try importText(
            xmlMapping, "m.osm",
            """
            <osm><node id="1"/><node id="2"/><way id="1"/>
            <relation id="10"><member type="way" ref="1" role="outer"/><member type="node" ref="2" role=""/>
              <member type="relation" ref="11"/><member type="node" ref="99" role="label"/></relation>
            <relation id="11"><member type="node" ref="1" role="stop"/></relation></osm>
            """, store: store)
        let reader = StoreReader(store)
        #expect(
            reader.rows(
                "SELECT \"Relation_@id\", position, target_entity, target_key, role FROM Relation_members ORDER BY 1, 2"
            ) == [
                ["10", "0", "way", "1", "outer"], ["10", "1", "node", "2", ""], ["10", "2", "relation", "11", nil],
                ["10", "3", "node", "99", "label"], ["11", "0", "node", "1", "stop"],
            ])
        // Node 99 is missing; way 1 and node 1 share an id but are different targets.
        #expect(report.dangling == ["Relation_members": 1])
    }

    @Test func jsonMembersWithStubsAndReplaceOnASecondImport() throws {
        let yaml = """
            entities:
              Relation:
                records: "$.relations[*]"
                key: id
                attributes: {id: integer}
                relationships:
                  members: {source: "members[*]", many: true, key: ref, entity-by: type, missing: stub,
                            entities: {node: Node, way: Way}, attributes: {role: string}}
              Node: {key: id, attributes: {id: integer}}
              Way: {key: id, attributes: {id: integer, name: string}}
            """
        let store = newStore()
        try importText(
            yaml, "r.json",
            #"{"relations": [{"id": 1, "members": [{"type": "node", "ref": 5, "role": "a"}, {"type": "way", "ref": 5, "role": "b"}]}]}"#,
            store: store)
        let reader = StoreReader(store)
        #expect(reader.rows("SELECT id FROM Node") == [["5"]])
        #expect(reader.rows("SELECT id, name FROM Way") == [["5", nil]])
        try importText(
            yaml, "r.json", #"{"relations": [{"id": 1, "members": [{"type": "way", "ref": 6, "role": "c"}]}]}"#,
            store: store)
        #expect(reader.rows("SELECT target_entity, target_key, role FROM Relation_members") == [["way", "6", "c"]])
    }

    @Test func anUnknownEntityOrMissingKeyIsAnErrorWithTheItem() throws {
        for (member, message) in [
            ("<member type=\"area\" ref=\"1\"/>", "item 1: the item names the entity \"area\""),
            ("<member type=\"node\"/>", "item 1 has no target key"),
        ] {
            do {
                try importText(
                    xmlMapping, "m.osm", "<osm><relation id=\"1\">\(member)</relation></osm>", store: newStore())
                Issue.record("accepted \(member)")
            } catch {
                #expect("\(error)".contains(message), "\(error)")
            }
        }
    }

    @Test func mappingErrors() {
        let base =
            "entities: {N: {records: /n, key: id, attributes: {id: integer}}, R: {records: /r, key: id, attributes: {id: integer}, relationships: {m: %@}}}"
        let cases = [
            ("{source: \"member[*]\", many: true, entity-by: \"@type\", entities: {node: N}}", "need a `key` path"),
            (
                "{source: \"member[*]\", many: true, key: \"@ref\", entities: {node: N}}",
                "`entity-by` and `entities` go together"
            ),
            (
                "{source: \"member[*]\", many: true, key: \"@ref\", entity-by: \"@type\", entities: {node: N, way: W}}",
                "no entity `W`"
            ),
            (
                "{source: \"member\", key: \"@ref\", entity-by: \"@type\", entities: {node: N}}",
                "for to-many relationships"
            ),
            (
                "{source: \"member[*]\", many: true, key: \"@ref\", entity-by: \"@type\", rule: replace-and-delete, entities: {node: N}}",
                "single target entity"
            ),
            (
                "{source: \"member[*]\", many: true, key: \"@ref\", entity: N, attributes: {position: integer}}",
                "reserved"
            ),
        ]
        for (relationship, message) in cases {
            do {
                _ = try Mapping.parse(yaml: base.replacingOccurrences(of: "%@", with: relationship))
                Issue.record("accepted \(relationship)")
            } catch {
                #expect("\(error)".contains(message), "\(error)")
            }
        }
    }
}
