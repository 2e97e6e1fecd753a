import SluiceParsers
@_spi(Machinery) import SluiceRecords
import Testing

/// A parse worker of a zero-config run maps with a follower of the run's
/// mapper (`SchemalessMapper(following:)`): the same row for a record whose
/// members are all known columns, and a refusal, never a column of its own,
/// for any other.
@Suite struct SchemalessFollowerTests {
    /// Maps each record of `json` with the mapper `mapping(ordinal)` gives,
    /// into one arena; the ordinals whose mapping threw.
    final class Mapped: RecordSink {
        var arena = RowArena(columnCount: 1)
        var refused: [Int] = []
        let mapper: (Int) -> SchemalessMapper

        init(_ mapper: @escaping (Int) -> SchemalessMapper) { self.mapper = mapper }

        func record(_ tree: RecordTree, entities: [Int], deleting: [Int], ordinal: Int) throws {
            do { _ = try mapper(ordinal).appendRow(tree, root: 0, ordinal: ordinal, into: &arena) } catch {
                refused.append(ordinal)
            }
        }

        /// Row `row` as text, its cells' kinds told apart.
        func row(_ row: Int) -> [String] {
            (0..<arena.columnCount).map { column in
                let cell = arena[row, column]
                switch cell {
                case .text: return "'" + arena.withText(cell) { String(decoding: $0, as: UTF8.self) } + "'"
                default: return "\(cell)"
                }
            }
        }
    }

    func map(_ json: String, with mapper: @escaping (Int) -> SchemalessMapper) throws -> Mapped {
        let mapped = Mapped(mapper)
        let assembler = RecordAssembler(routes: try compiled().routes, sink: mapped)
        let parser = JSONPushParser(handler: assembler, name: "t.jsonl", multipleValues: true)
        try Array(json.utf8).withUnsafeBytes { try parser.feed($0) }
        try parser.finish()
        return mapped
    }

    func compiled() throws -> CompiledMapping {
        CompiledMapping(schemaless: "E", key: "id", records: try RecordPath.parse("$").get())
    }

    func leader() throws -> SchemalessMapper { try #require(try compiled().mappers.first as? SchemalessMapper) }

    @Test func aFollowerMapsKnownMembersAsItsLeaderAndRefusesTheRest() throws {
        let lead = try leader()
        _ = try map(#"{"id": 1, "a": "x", "n": 2.5}"#, with: { _ in lead })
        let follower = SchemalessMapper(following: lead.columns)
        // Record 2: a number into the text column and an integer into the
        // real one, as the leader converts them; record 2 of them has a new member.
        let records = #"{"id": 2, "a": 5, "n": 3}"# + "\n" + #"{"id": 3, "b": true}"# + "\n" + #"{"id": 4, "a": "y"}"#
        let followed = try map(records, with: { _ in follower })
        #expect(followed.refused == [2])
        #expect(follower.outgrownAt == 2)
        #expect(follower.schema.columns.map(\.name) == ["id", "a", "n"])
        let other = try leader()
        _ = try map(#"{"id": 1, "a": "x", "n": 2.5}"#, with: { _ in other })
        let led = try map(records, with: { _ in other })
        #expect(led.refused.isEmpty)
        // The leader's rows have one column more, `b`, which they lack.
        #expect(followed.row(0) + ["absent"] == led.row(0))
        #expect(followed.arena.rowCount == 2)
        #expect(followed.row(1) + ["absent"] == led.row(2))

        // Once following the leader's columns after that record, it maps it as the leader did.
        follower.follow(other.columns)
        #expect(follower.outgrownAt == nil)
        let again = try map(#"{"id": 3, "b": true}"#, with: { _ in follower })
        #expect(again.refused.isEmpty)
        #expect(again.row(0) == led.row(1))
    }

    /// The first record with the key decides its type: a follower of a
    /// table that has none yet refuses it.
    @Test func aFollowerRefusesToDecideTheKeysType() throws {
        let follower = SchemalessMapper(following: try leader().columns)
        let mapped = try map(#"{"id": 7}"#, with: { _ in follower })
        #expect(mapped.refused == [1])
        #expect(follower.outgrownAt == 1)
    }
}
