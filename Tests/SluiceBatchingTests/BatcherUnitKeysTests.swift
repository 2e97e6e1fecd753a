import SluiceBatching
import SluiceParsers
@_spi(Machinery) import SluiceRecords
import Testing

/// The keys a record produced, as ``Batcher/appendRecordKeys(to:hasher:scratch:)``
/// writes them (each key encoded in place behind a length that is filled in
/// after it), read back by ``UnitKeys/forEach(_:digest:_:)``.
@Suite struct BatcherUnitKeysTests {
    /// The entries of one record `json` of a mapping whose record entity `A`
    /// (own: key only) names a `B` (a contribution each).
    private func entries(_ json: String) throws -> (bytes: [UInt8], entries: [UnitKeys.Entry]) {
        let compiled = try CompiledMapping(
            Mapping.parse(
                yaml: """
                    entities:
                      A: {records: $, key: id, attributes: {id: string}, relationships: {b: {entity: B, source: b}}}
                      B: {key: id, attributes: {id: string, name: string}}
                    """))
        let batcher = Batcher(compiled, limits: BatchLimits())
        let parser = JSONPushParser(
            handler: RecordAssembler(routes: compiled.routes, sink: batcher), name: "t", multipleValues: true)
        batcher.markRecord()
        try Array(json.utf8).withUnsafeBytes { try parser.feed($0) }
        try parser.finish()
        var out: [UInt8] = []
        var scratch: [UInt8] = []
        batcher.appendRecordKeys(to: &out, hasher: ContributionHasher(key0: 1, key1: 2), scratch: &scratch)
        var entries: [UnitKeys.Entry] = []
        let complete = UnitKeys.forEach(out, digest: UnitDigest(high: 7, low: 9)) { entries.append($0) }
        #expect(complete)
        return (out, entries)
    }

    @Test func shortAndLongKeysReadBack() throws {
        let long = String(repeating: "k", count: 300)
        let short = try entries(#"{"id": "a1", "b": {"id": "b1", "name": "n"}}"#)
        let longer = try entries(#"{"id": "\#(long)", "b": {"id": "\#(long)x", "name": "n"}}"#)
        #expect(short.entries.map(\.table) == [0, 1])
        #expect(longer.entries.map(\.table) == [0, 1])
        // A key of 128 bytes or more has a two-byte length: read back whole,
        // the next entry where it ends.
        #expect(short.entries.allSatisfy { $0.key.count < 128 })
        #expect(longer.entries.allSatisfy { $0.key.count >= 300 })
        #expect(String(decoding: longer.entries[0].key, as: UTF8.self).hasSuffix(long))
        #expect(String(decoding: longer.entries[1].key, as: UTF8.self).hasSuffix(long + "x"))
        // Tag and length, the key, and B's 8-byte contribution: nothing else.
        #expect(short.bytes.count == short.entries.reduce(0) { $0 + 2 + $1.key.count } + 8)
        #expect(longer.bytes.count == longer.entries.reduce(0) { $0 + 3 + $1.key.count } + 8)
        // The own entry's contribution is the unit's digest; B's is its row's
        // hash, alike for alike rows.
        #expect(longer.entries[0].contribution == 7)
        let other = try entries(#"{"id": "a2", "b": {"id": "b1", "name": "n"}}"#)
        #expect(other.entries[1].contribution == short.entries[1].contribution)
        #expect(other.entries[1].contribution != longer.entries[1].contribution)
    }
}
