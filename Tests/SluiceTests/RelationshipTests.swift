import Foundation
import Sluice
import SluiceTestSupport
import Testing

@Suite struct RelationshipTests {
    @Test func sharedNestedChildIsCreatedOnceJSONAndXML() throws {
        let json = """
            entities:
              User: {records: $, key: id, attributes: {id: integer, name: string}, relationships: {company: {entity: Company, source: company}}}
              Company: {key: id, attributes: {id: integer, name: string}}
            """
        let xml = """
            entities:
              User: {records: /users/user, key: id, attributes: {id: integer, name: string}, relationships: {company: {entity: Company, source: company}}}
              Company: {key: id, attributes: {id: integer, name: string}}
            """
        let jsonText = (1...5).map {
            "{\"id\": \($0), \"name\": \"u\($0)\", \"company\": {\"id\": \($0 % 2), \"name\": \"c\($0 % 2)\"}}"
        }.joined(separator: "\n")
        let xmlText =
            "<users>"
            + (1...5).map {
                "<user id=\"\($0)\" name=\"u\($0)\"><company id=\"\($0 % 2)\" name=\"c\($0 % 2)\"/></user>"
            }.joined() + "</users>"
        for (yaml, name, text) in [(json, "u.jsonl", jsonText), (xml, "u.xml", xmlText)] {
            let store = newStore()
            let report = try importText(yaml, name, text, store: store)
            #expect(report[entity: "User"]?.inserted == 5)
            #expect(report[entity: "Company"]?.inserted == 2)
            let reader = StoreReader(store)
            #expect(
                reader.rows("SELECT id, company FROM User ORDER BY id") == [
                    ["1", "1"], ["2", "0"], ["3", "1"], ["4", "0"], ["5", "1"],
                ])
            #expect(reader.rows("SELECT id, name FROM Company ORDER BY id") == [["0", "c0"], ["1", "c1"]])
            #expect(report.dangling.isEmpty)
        }
    }

    @Test func scalarReferencesResolveForwardAndCountDangling() throws {
        let yaml = """
            entities:
              Post: {records: /site/post, key: Id, attributes: {Id: integer}, relationships: {owner: {entity: User, source: "@OwnerUserId"}}}
              User: {records: /site/user, key: Id, attributes: {Id: integer, Name: string}}
            """
        let store = newStore()
        let report = try importText(
            yaml, "s.xml",
            """
            <site><post Id="1" OwnerUserId="7"/><post Id="2" OwnerUserId="8"/><post Id="3"/><user Id="7" Name="later"/></site>
            """, store: store)
        #expect(report.dangling == ["Post.owner": 1])
        #expect(
            StoreReader(store).rows("SELECT p.Id, u.Name FROM Post p LEFT JOIN User u ON u.Id = p.owner ORDER BY p.Id")
                == [["1", "later"], ["2", nil], ["3", nil]])
    }

    @Test func stubAndErrorPolicies() throws {
        let stub = """
            entities:
              Post: {records: $, key: id, attributes: {id: integer}, relationships: {owner: {entity: User, source: owner, missing: stub}}}
              User: {records: "$.users[*]", key: id, attributes: {id: integer, name: string}}
            """
        let store = newStore()
        let report = try importText(
            stub, "p.jsonl", "{\"id\": 1, \"owner\": 42}\n{\"id\": 2, \"owner\": \"42\"}", store: store)
        #expect(report.dangling.isEmpty)
        #expect(StoreReader(store).rows("SELECT id, name FROM User") == [["42", nil]])
        let strict = stub.replacingOccurrences(of: "missing: stub", with: "missing: error")
        do {
            _ = try importText(strict, "p.jsonl", "{\"id\": 3, \"owner\": 99}", store: newStore())
            Issue.record("a dangling reference passed a missing: error relationship")
        } catch {
            #expect("\(error)".contains("Post.owner: 1 links"))
        }
    }

    @Test func idListsUnionReplaceAndClearing() throws {
        func run(_ rule: String, _ second: String) throws -> [[String?]] {
            let yaml = """
                entities:
                  Group: {records: $, key: id, attributes: {id: integer},
                          relationships: {members: {entity: Person, source: "members[*]", many: true, rule: \(rule)}}}
                  Person: {key: id, attributes: {id: integer}}
                """
            let store = newStore()
            try importText(
                yaml, "a.jsonl", "{\"id\": 1, \"members\": [1, 2, 3]}\n{\"id\": 2, \"members\": [4]}", store: store)
            try importText(yaml, "b.jsonl", second, store: store)
            return StoreReader(store).rows("SELECT Group_id, Person_id FROM Group_members ORDER BY 1, 2")
        }
        #expect(
            try run("union", "{\"id\": 1, \"members\": [3, 5]}") == [
                ["1", "1"], ["1", "2"], ["1", "3"], ["1", "5"], ["2", "4"],
            ])
        #expect(try run("replace", "{\"id\": 1, \"members\": [3, 5]}") == [["1", "3"], ["1", "5"], ["2", "4"]])
        #expect(try run("union", "{\"id\": 1, \"members\": []}") == [["2", "4"]])
        #expect(try run("replace", "{\"id\": 1, \"members\": null}") == [["2", "4"]])
        #expect(try run("replace", "{\"id\": 1}") == [["1", "1"], ["1", "2"], ["1", "3"], ["2", "4"]])
        #expect(
            try run("replace", "{\"id\": 1, \"members\": [9]}\n{\"id\": 1, \"members\": [8]}") == [
                ["1", "8"], ["2", "4"],
            ])
        // Sources after every stored one skip the read of stored links; a
        // batch starting at the greatest stored source still reads them.
        #expect(
            try run("replace", "{\"id\": 3, \"members\": [6, 7]}")
                == [["1", "1"], ["1", "2"], ["1", "3"], ["2", "4"], ["3", "6"], ["3", "7"]])
        #expect(
            try run("replace", "{\"id\": 2, \"members\": [5]}\n{\"id\": 3, \"members\": [6]}")
                == [["1", "1"], ["1", "2"], ["1", "3"], ["2", "5"], ["3", "6"]])
    }

    @Test func orderedXMLListsKeepSourceOrderAndRepeats() throws {
        let yaml = """
            entities:
              Way: {records: /osm/way, key: id, attributes: {id: integer},
                    relationships: {nodes: {entity: Node, source: "nd[*]/@ref", many: true, ordered: true}}}
              Node: {records: /osm/node, key: id, attributes: {id: integer}}
            """
        let store = newStore()
        let report = try importText(
            yaml, "w.xml",
            """
            <osm><way id="5"><nd ref="3"/><nd ref="1"/><nd ref="2"/><nd ref="3"/></way><node id="1"/><node id="2"/><node id="3"/></osm>
            """, store: store)
        #expect(report.dangling.isEmpty)
        #expect(
            StoreReader(store).rows("SELECT Node_id FROM Way_nodes WHERE Way_id = 5 ORDER BY position").map { $0[0] }
                == ["3", "1", "2", "3"])
    }

    @Test func playerGroupPlayersCycle() throws {
        let yaml = """
            entities:
              Player: {records: $, key: id, attributes: {id: integer, name: string}, relationships: {group: {entity: Group, source: group}}}
              Group: {key: id, attributes: {id: integer, name: string},
                      relationships: {players: {entity: Player, source: "players[*]", many: true}}}
            """
        let store = newStore()
        let report = try importText(
            yaml, "p.json", #"{"id": 1, "name": "p", "group": {"id": 10, "name": "g", "players": [1]}}"#, store: store)
        #expect(report[entity: "Player"]?.inserted == 1)
        #expect(report[entity: "Group"]?.inserted == 1)
        let reader = StoreReader(store)
        #expect(reader.rows("SELECT id, \"group\" FROM Player") == [["1", "10"]])
        #expect(reader.rows("SELECT Group_id, Player_id FROM Group_players") == [["10", "1"]])
    }

    @Test func nestedListsOfObjectsAreFoundOrCreated() throws {
        let yaml = """
            entities:
              Post: {records: $, key: id, attributes: {id: integer},
                     relationships: {tags: {entity: Tag, source: "tags[*]", many: true}}}
              Tag: {key: name, attributes: {name: string, color: string}}
            """
        let store = newStore()
        let report = try importText(
            yaml, "t.jsonl",
            """
            {"id": 1, "tags": [{"name": "a", "color": "red"}, {"name": "b"}]}
            {"id": 2, "tags": [{"name": "a", "color": "blue"}]}
            """, store: store)
        #expect(report[entity: "Tag"]?.inserted == 2)
        let reader = StoreReader(store)
        #expect(reader.rows("SELECT name, color FROM Tag ORDER BY name") == [["a", "blue"], ["b", nil]])
        #expect(
            reader.rows("SELECT Post_id, Tag_name FROM Post_tags ORDER BY 1, 2") == [
                ["1", "a"], ["1", "b"], ["2", "a"],
            ])
    }

    @Test func relationshipMappingErrors() {
        do {
            _ = try Mapping.parse(
                yaml: """
                    entities:
                      A: {records: $, key: id, attributes: {id: integer}, relationships: {b: {entity: Nope}, c: {entity: C, source: "x[*]"}}}
                      C: {key: [], attributes: {x: string}}
                    """)
            Issue.record("accepted")
        } catch {
            #expect("\(error)".contains("there is no entity `Nope`"))
            #expect("\(error)".contains("the target `C` has no key: give it one, or say `keyless: reuse`"))
            #expect("\(error)".contains("a to-many source has one [*] step"))
        }
    }
}
