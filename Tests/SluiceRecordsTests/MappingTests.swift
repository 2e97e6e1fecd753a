import SluiceRecords
import Testing

@Suite struct MappingTests {
    @Test func readsEntitiesInOrderWithEveryOption() throws {
        let mapping = try Mapping.parse(yaml: """
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
            _ = try Mapping.parse(yaml: """
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

    @Test func rejectsNonMappingsAndBadYAML() {
        #expect(throws: MappingError.self) { try Mapping.parse(yaml: "- a\n- b") }
        #expect(throws: MappingError.self) { try Mapping.parse(yaml: "entities: {Post: [") }
        #expect(throws: MappingError.self) { try Mapping.parse(yaml: "entities: {}") }
    }

    @Test func defaultMustFitTheType() {
        #expect(throws: MappingError.self) {
            try Mapping.parse(yaml: "entities: {A: {records: $, key: id, attributes: {id: integer, n: {type: integer, default: abc}}}}")
        }
    }

    @Test func parsesRecordAndFieldPaths() throws {
        let xml = try RecordPath.parse("/osm/node").get()
        #expect(xml.kind == .xml && xml.components == [.name(Array("osm".utf8)), .name(Array("node".utf8))])
        #expect(try RecordPath.parse("$").get().components.isEmpty)
        #expect(try RecordPath.parse("$.jobs[*]").get().components == [.name(Array("jobs".utf8)), .anyIndex])
        #expect((try? RecordPath.parse("$jobs").get()) == nil)
        let field = try FieldPath.parse("payload.commits[2].sha", kind: .json).get()
        #expect(field.steps == [.child(Array("payload".utf8)), .child(Array("commits".utf8)), .index(2), .child(Array("sha".utf8))])
        let attribute = try FieldPath.parse("revision/contributor/@id", kind: .xml).get()
        #expect(attribute.steps.last == .attribute(Array("id".utf8)))
        #expect((try? FieldPath.parse("@a/b", kind: .xml).get()) == nil)
    }
}

/// Names a mapping makes that SQLite would take for one (issue 17): before,
/// `_Sluice_Runs` broke the ledger, colliding link tables mixed their links,
/// and `source: .` on a relationship to its own entity failed per record.
@Suite struct MappingNameTests {
    func problems(_ yaml: String) -> String {
        do {
            _ = try CompiledMapping(Mapping.parse(yaml: yaml))
            return ""
        } catch {
            return "\(error)"
        }
    }

    @Test(arguments: ["_Sluice_Runs", "_SLUICE_CHECKPOINTS", "SQLITE_x"]) func reservedNamesIgnoreLetterCase(name: String) {
        #expect(problems("entities: {\(name): {records: $, key: id, attributes: {id: integer}}}").contains("reserved"))
    }

    @Test func generatedTableNamesMustBeUnique() {
        let links = """
            entities:
              A_b: {records: $, key: id, attributes: {id: integer}, relationships: {c: {entity: T, source: "x[*]", many: true}}}
              A: {records: $, key: id, attributes: {id: integer}, relationships: {b_c: {entity: T, source: "y[*]", many: true}}}
              T: {key: id, attributes: {id: integer}}
            """
        #expect(problems(links).contains("the link table `A_b_c` of relationship `A.b_c` has the name of the link table `A_b_c` of relationship `A_b.c`"))
        let entity = """
            entities:
              Event: {records: $, key: id, attributes: {id: integer}, relationships: {tags: {entity: Tag, source: "tags[*]", many: true}}}
              Event_TAGS: {records: $, key: id, attributes: {id: integer}}
              Tag: {key: name, attributes: {name: string}}
            """
        #expect(problems(entity).contains("has the name of entity `Event_TAGS`"))
    }

    @Test func aRelationshipToItselfFromDotIsACycle() {
        let yaml = "entities: {P: {records: $, key: id, attributes: {id: integer}, relationships: {me: {entity: P, source: .}}}}"
        #expect(problems(yaml).contains("a cycle"))
    }
}
