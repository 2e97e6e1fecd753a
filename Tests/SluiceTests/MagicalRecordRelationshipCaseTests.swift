import Sluice
import SluiceTestSupport
import Testing

/// MagicalRecord's relationship cases, MR-13 to MR-19.
@Suite struct MagicalRecordRelationshipCaseTests {
    @Test func mr13NestedObjectFoundByKeyAndUpdated() throws {
        let yaml = """
            entities:
              MappedEntity: {records: "$.existing[*]", key: mappedEntityID, attributes: {mappedEntityID: integer, sampleAttribute: string}}
              Parent: {records: "$.parents[*]", key: [], attributes: {name: string},
                       relationships: {mappedEntity: {entity: MappedEntity, source: mappedEntity}}}
            """
        let store = newStore()
        try importText(
            yaml, "setup.json", #"{"existing": [{"mappedEntityID": 42, "sampleAttribute": "setup text"}]}"#,
            store: store)
        try importText(
            yaml, "import.json",
            #"{"parents": [{"name": "p", "mappedEntity": {"mappedEntityID": 42, "sampleAttribute": "This is sample json file"}}]}"#,
            store: store)
        let reader = StoreReader(store)
        #expect(reader.count("MappedEntity") == 1)
        #expect(reader.value("SELECT sampleAttribute FROM MappedEntity") == "This is sample json file")
        #expect(reader.value("SELECT mappedEntity FROM Parent") == "42")
    }

    @Test func mr14RenamedRelationshipKeyAndMappedDestinationKey() throws {
        let yaml = """
            entities:
              Parent: {records: $, key: [], attributes: {name: string},
                       relationships: {mappedEntity: {entity: MappedEntity, source: someRandomAttributeName}}}
              MappedEntity: {key: testMappedEntityID, attributes: {testMappedEntityID: {type: integer, source: id}, sampleAttribute: string}}
            """
        let store = newStore()
        try importText(
            yaml, "a.json", #"{"someRandomAttributeName": {"id": 42, "sampleAttribute": "old"}}"#, store: store)
        try importText(
            yaml, "b.json",
            #"{"name": "p", "someRandomAttributeName": {"id": 42, "sampleAttribute": "This is sample json file"}}"#,
            store: store)
        let reader = StoreReader(store)
        #expect(
            reader.rows("SELECT testMappedEntityID, sampleAttribute FROM MappedEntity") == [
                ["42", "This is sample json file"]
            ])
        #expect(reader.rows("SELECT mappedEntity FROM Parent ORDER BY rowid") == [["42"], ["42"]])
    }

    @Test func mr15KeyPathInsideARelatedRecord() throws {
        let yaml = """
            entities:
              Parent: {records: $, key: [], attributes: {n: string}, relationships: {mappedEntity: {entity: MappedEntity, source: mappedEntity}}}
              MappedEntity: {key: mappedEntityID, attributes: {mappedEntityID: integer, nestedAttribute: {source: attributeValue.nestedValue}}}
            """
        let store = newStore()
        try importText(
            yaml, "a.json",
            #"{"mappedEntity": {"mappedEntityID": 42, "attributeValue": {"nestedValue": "This is a nested value"}}}"#,
            store: store)
        #expect(StoreReader(store).rows("SELECT * FROM MappedEntity") == [["42", "This is a nested value"]])
    }

    @Test func mr17ToManyNestedObjectsAbsentKeepsNullClears() throws {
        let yaml = """
            entities:
              Parent: {records: $, key: id, attributes: {id: integer},
                       relationships: {mappedEntities: {entity: MappedEntity, source: "mappedEntities[*]", many: true}}}
              MappedEntity: {key: testMappedEntityID, attributes: {testMappedEntityID: {type: integer, source: id}}}
            """
        let store = newStore()
        try importText(
            yaml, "a.json", #"{"id": 1, "mappedEntities": [{"id": 1}, {"id": 2}, {"id": 3}, {"id": 4}]}"#, store: store)
        let reader = StoreReader(store)
        #expect(reader.count("Parent_mappedEntities") == 4)
        try importText(yaml, "b.json", #"{"id": 1}"#, store: store)
        #expect(reader.count("Parent_mappedEntities") == 4)
        try importText(yaml, "c.json", #"{"id": 1, "mappedEntities": null}"#, store: store)
        #expect(reader.count("Parent_mappedEntities") == 0)
        #expect(reader.count("MappedEntity") == 4)
    }

    @Test func mr18ListOfIdsUnionKeepsExistingLinksAndTouchesNoAttributes() throws {
        let yaml = """
            entities:
              MappedEntity: {records: "$.entities[*]", key: testMappedEntityID, attributes: {testMappedEntityID: integer, text: string}}
              Parent: {records: "$.parents[*]", key: testPrimaryKey, attributes: {testPrimaryKey: integer},
                       relationships: {mappedEntities: {entity: MappedEntity, source: "mappedEntities[*]", many: true, rule: union}}}
            """
        let store = newStore()
        let setup = (0...9).map { "{\"testMappedEntityID\": \($0), \"text\": \"test attribute \($0)\"}" }.joined(
            separator: ", ")
        try importText(
            yaml, "setup.json",
            "{\"entities\": [\(setup)], \"parents\": [{\"testPrimaryKey\": 84, \"mappedEntities\": [9]}]}", store: store
        )
        try importText(
            yaml, "import.json", #"{"parents": [{"testPrimaryKey": 84, "mappedEntities": [1, 2, 3, 4]}]}"#, store: store
        )
        let reader = StoreReader(store)
        #expect(reader.count("Parent") == 1)
        #expect(reader.count("MappedEntity") == 10)
        #expect(
            reader.rows("SELECT MappedEntity_testMappedEntityID FROM Parent_mappedEntities ORDER BY 1").map { $0[0] }
                == ["1", "2", "3", "4", "9"])
        #expect(
            reader.value("SELECT count(*) FROM MappedEntity WHERE text = 'test attribute ' || testMappedEntityID")
                == "10")
    }

    @Test func mr19LookupsAreScopedToTheExactEntity() throws {
        // An abstract and a concrete entity are two tables here: each
        // relationship finds or creates rows in its own target only, in any order.
        for order in [["abstract", "concrete"], ["concrete", "abstract"]] {
            let relationships = order.map { name in
                name == "abstract"
                    ? "base: {entity: Base, source: \"base[*]\", many: true}"
                    : "concrete: {entity: Concrete, source: \"concrete[*]\", many: true}"
            }.joined(separator: ", ")
            let yaml = """
                entities:
                  Holder: {records: $, key: id, attributes: {id: integer}, relationships: {\(relationships)}}
                  Base: {key: sampleBaseAttribute, attributes: {sampleBaseAttribute: string}}
                  Concrete: {key: sampleConcreteAttribute, attributes: {sampleConcreteAttribute: string, sampleBaseAttribute: string}}
                """
            let store = newStore()
            try importText(
                yaml, "h.json",
                """
                {"id": 1, "base": [{"sampleBaseAttribute": "BASE 1"}, {"sampleBaseAttribute": "BASE 2"}],
                 "concrete": [{"sampleConcreteAttribute": "C1", "sampleBaseAttribute": "BASE 1"},
                              {"sampleConcreteAttribute": "C2", "sampleBaseAttribute": "BASE 2"},
                              {"sampleConcreteAttribute": "C3", "sampleBaseAttribute": "BASE 3"}]}
                """, store: store)
            let reader = StoreReader(store)
            #expect(reader.count("Base") == 2)
            #expect(reader.count("Concrete") == 3)
            #expect(reader.count("Holder_base") == 2 && reader.count("Holder_concrete") == 3)
        }
    }
}
