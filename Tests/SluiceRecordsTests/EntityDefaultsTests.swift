@_spi(Machinery) import SluiceRecords
import Testing

/// The write mode and delete-missing are settled once, when a mapping is
/// compiled for a run: the entity's own, else the run's.
@Suite struct EntityDefaultsTests {
    static let yaml = """
        entities:
          A: {records: $, key: id, mode: replace, delete-missing: false, attributes: {id: integer}}
          B:
            records: $
            key: id
            attributes: {id: integer}
            relationships:
              cs: {entity: C, source: "cs[*]", many: true}
              listed: {entity: C, source: "listed[*]", many: true, missing: dangling}
          C: {key: id, attributes: {id: integer}}
          D: {records: $, key: [], attributes: {n: integer}}
        """

    @Test func eachTableCarriesItsEntitysModeAndDeleteMissingElseTheRuns() throws {
        let defaults = EntityDefaults(mode: .updateOnly, deleteMissing: true)
        let compiled = try CompiledMapping(Mapping.parse(yaml: Self.yaml), defaults: defaults)
        let schemas = compiled.mappers.map(\.schema)
        #expect(schemas.map(\.mode) == [.replace, .updateOnly, .updateOnly, .updateOnly])
        // D has no key: nothing to sweep by.
        #expect(schemas.map(\.deleteMissing) == [false, true, true, false])
        // Links to an update-only target go only to stored rows, unless the
        // mapping says what a missing target means.
        #expect(compiled.links.map(\.storedTargetsOnly) == [true, false])
        let plain = try CompiledMapping(Mapping.parse(yaml: Self.yaml))
        #expect(plain.mappers.map(\.schema.mode) == [.replace, .upsert, .upsert, .upsert])
        #expect(plain.mappers.map(\.schema.deleteMissing) == [false, false, false, false])
        #expect(plain.links.map(\.storedTargetsOnly) == [false, false])
    }

    @Test func aZeroConfigTableTakesTheRunsAndKeepsThemWhenItAdoptsTheStoredColumns() throws {
        let path = try RecordPath.parse("$").get()
        let compiled = CompiledMapping(
            schemaless: "Event", key: "id", records: path,
            defaults: EntityDefaults(mode: .insertOnly, deleteMissing: true))
        let mapper = try #require(compiled.mappers.first)
        mapper.adopt(stored: [ColumnSchema(name: "id", type: .integer), ColumnSchema(name: "n", type: .string)])
        #expect(mapper.schema.columns.count == 2)
        #expect(mapper.schema.mode == .insertOnly)
        #expect(mapper.schema.deleteMissing)
    }
}
