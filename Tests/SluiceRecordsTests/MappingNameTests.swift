import SluiceRecords
import Testing

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

    @Test(arguments: ["_Sluice_Runs", "_SLUICE_CHECKPOINTS", "SQLITE_x"]) func reservedNamesIgnoreLetterCase(
        name: String
    ) {
        #expect(problems("entities: {\(name): {records: $, key: id, attributes: {id: integer}}}").contains("reserved"))
    }

    @Test func generatedTableNamesMustBeUnique() {
        let links = """
            entities:
              A_b: {records: $, key: id, attributes: {id: integer}, relationships: {c: {entity: T, source: "x[*]", many: true}}}
              A: {records: $, key: id, attributes: {id: integer}, relationships: {b_c: {entity: T, source: "y[*]", many: true}}}
              T: {key: id, attributes: {id: integer}}
            """
        #expect(
            problems(links).contains(
                "the link table `A_b_c` of relationship `A.b_c` has the name of the link table `A_b_c` of relationship `A_b.c`"
            ))
        let entity = """
            entities:
              Event: {records: $, key: id, attributes: {id: integer}, relationships: {tags: {entity: Tag, source: "tags[*]", many: true}}}
              Event_TAGS: {records: $, key: id, attributes: {id: integer}}
              Tag: {key: name, attributes: {name: string}}
            """
        #expect(problems(entity).contains("has the name of entity `Event_TAGS`"))
    }

    @Test func aRelationshipToItselfFromDotIsACycle() {
        let yaml =
            "entities: {P: {records: $, key: id, attributes: {id: integer}, relationships: {me: {entity: P, source: .}}}}"
        #expect(problems(yaml).contains("a cycle"))
    }
}
