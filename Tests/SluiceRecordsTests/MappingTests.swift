import SluiceRecords
import Testing

@Suite struct MappingTests {
    @Test func readsEntitiesInOrderWithEveryOption() throws {
        let mapping = try Mapping.parse(
            yaml: """
                entities:
                  Post:
                    records: [/posts/row, /archive/*/row]
                    key: Id
                    attributes:
                      Id: integer
                      Title: {type: string, source: "@Title", default: "untitled"}
                      Owner: {type: integer, source: ["@OwnerUserId", "@OwnerId"], invalid: null}
                  Event:
                    records: $
                    key: id
                    attributes:
                      id: string
                      login: {source: actor.login}
                """)
        #expect(mapping.entities.map(\.name) == ["Post", "Event"])
        let post = mapping.entities[0]
        #expect(post.records == ["/posts/row", "/archive/*/row"])
        #expect(post.attributes.map(\.name) == ["Id", "Title", "Owner"])
        #expect(post.attributes[1].defaultValue == "untitled")
        #expect(post.attributes[2].sources == ["@OwnerUserId", "@OwnerId"])
        #expect(post.attributes[2].onInvalid == .null)
        #expect(mapping.entities[1].attributes[1].type == .string)
    }

    @Test func reportsEveryProblemWithItsLine() {
        do {
            _ = try Mapping.parse(
                yaml: """
                    entities:
                      Post:
                        records: posts/row
                        key: Nope
                        attributes:
                          Id: int
                          Body: {type: string, source: "a//b"}
                          body: string
                    """, file: "m.yml")
            Issue.record("an invalid mapping was accepted")
        } catch {
            let text = "\(error)"
            #expect(text.contains("m.yml:6: entity `Post`, attribute `Id`: unknown type `int`"))
            #expect(text.contains("must start with /"))
            #expect(text.contains("the key `Nope` is not one of its attributes"))
            #expect(text.contains("mapped twice"))
            #expect(text.contains("empty step"))
            #expect(error.problems.count == 5)
        }
    }

    /// Booleans are read as YAML 1.1 spells them plain, and a quoted one is
    /// text: the reader types them itself (no resolver's regular expressions).
    @Test func readsPlainBooleansAndRefusesQuotedOnes() throws {
        func deletesMissing(_ flag: String) throws -> Bool? {
            let yaml = "entities: {E: {records: $, key: id, delete-missing: \(flag), attributes: {id: integer}}}"
            return try Mapping.parse(yaml: yaml).entities[0].deleteMissing
        }
        for spelling in ["true", "True", "TRUE", "yes", "Yes", "YES", "on", "On", "ON"] {
            #expect(try deletesMissing(spelling) == true, "\(spelling)")
        }
        for spelling in ["false", "False", "FALSE", "no", "No", "NO", "off", "Off", "OFF"] {
            #expect(try deletesMissing(spelling) == false, "\(spelling)")
        }
        for spelling in [#""true""#, "'yes'", "tRUE", "1", "y"] {
            #expect(throws: MappingError.self, "\(spelling)") { try deletesMissing(spelling) }
        }
    }

    @Test func rejectsNonMappingsAndBadYAML() {
        #expect(throws: MappingError.self) { try Mapping.parse(yaml: "- a\n- b") }
        #expect(throws: MappingError.self) { try Mapping.parse(yaml: "entities: {Post: [") }
        #expect(throws: MappingError.self) { try Mapping.parse(yaml: "entities: {}") }
    }

    @Test func defaultMustFitTheType() {
        #expect(throws: MappingError.self) {
            try Mapping.parse(
                yaml:
                    "entities: {A: {records: $, key: id, attributes: {id: integer, n: {type: integer, default: abc}}}}")
        }
    }

    @Test func parsesRecordAndFieldPaths() throws {
        let xml = try RecordPath.parse("/osm/node").get()
        #expect(xml.kind == .xml && xml.components == [.name(Array("osm".utf8)), .name(Array("node".utf8))])
        #expect(try RecordPath.parse("$").get().components.isEmpty)
        #expect(try RecordPath.parse("$.jobs[*]").get().components == [.name(Array("jobs".utf8)), .anyIndex])
        #expect((try? RecordPath.parse("$jobs").get()) == nil)
        let field = try FieldPath.parse("payload.commits[2].sha", kind: .json).get()
        #expect(
            field.steps == [
                .child(Array("payload".utf8)), .child(Array("commits".utf8)), .index(2), .child(Array("sha".utf8)),
            ])
        let attribute = try FieldPath.parse("revision/contributor/@id", kind: .xml).get()
        #expect(attribute.steps.last == .attribute(Array("id".utf8)))
        #expect((try? FieldPath.parse("@a/b", kind: .xml).get()) == nil)
    }
}
