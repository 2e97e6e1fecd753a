import Foundation
import SluiceBatching
import SluiceParsers
@_spi(Machinery) import SluiceRecords
import SluiceTestSupport
import Testing

/// Feeds `count` JSON records `{"id": i, "text": "..."}` through a batcher,
/// one record a feed, cutting a group whenever it is full.
func batches(count: Int, limits: BatchLimits, textSize: Int = 10) throws -> [BatchGroup] {
    let compiled = try CompiledMapping(
        Mapping.parse(yaml: "entities: {A: {records: $, key: id, attributes: {id: integer, text: string}}}"))
    let batcher = Batcher(compiled, limits: limits)
    var groups: [BatchGroup] = []
    let assembler = RecordAssembler(routes: compiled.routes, sink: batcher)
    let parser = JSONPushParser(handler: assembler, name: "t", multipleValues: true)
    let text = String(repeating: "x", count: textSize)
    for index in 0..<count {
        try Array("{\"id\": \(index), \"text\": \"\(text)\"}\n".utf8).withUnsafeBytes { try parser.feed($0) }
        if batcher.isFull {
            groups.append(
                batcher.cut(
                    checkpoint: Checkpoint(input: "t", records: assembler.recordCount, bytes: 0), rawBytes: 0,
                    records: 0))
        }
    }
    try parser.finish()
    if !batcher.isEmpty {
        groups.append(
            batcher.cut(
                checkpoint: Checkpoint(input: "t", records: assembler.recordCount, bytes: 0), rawBytes: 0, records: 0))
    }
    return groups
}

@Suite struct BatcherTests {
    @Test func cutsAtTheRowLimit() throws {
        var limits = BatchLimits()
        limits.maxRows = 100
        let groups = try batches(count: 250, limits: limits)
        #expect(groups.map { $0.batches[0].rows.rowCount } == [100, 100, 50])
        #expect(groups.map(\.checkpoint?.records) == [100, 200, 250])
    }

    @Test func cutsAtTheByteLimit() throws {
        var limits = BatchLimits()
        limits.maxBytes = 64 * 1024
        let groups = try batches(count: 100, limits: limits, textSize: 4000)
        #expect(groups.count > 4)
        #expect(groups.allSatisfy { $0.batches[0].rows.byteSize < 64 * 1024 + 8 * 1024 })
        #expect(groups.reduce(0) { $0 + $1.batches[0].rows.rowCount } == 100)
    }
}

/// Arenas the consumer of the groups gives back (``Batcher/spares``).
@Suite struct BatcherSparesTests {
    /// Groups of events with tags (an entity, a stub entity, a link table:
    /// three shapes), titles of varied lengths, rendered cell by cell; with
    /// `spares`, each group's arenas are given back once rendered, as the
    /// store side gives them, so that the next group's tables take arenas
    /// of other tables' shapes, holding other rows' bytes.
    func groups(spares: ArenaPool?) throws -> [[[[String]]]] {
        let compiled = try CompiledMapping(
            Mapping.parse(
                yaml: """
                    entities:
                      E:
                        records: $
                        key: id
                        attributes: {id: integer, title: string, score: double}
                        relationships: {tags: {entity: T, source: "tags[*]", many: true, missing: stub}}
                      T: {key: name, attributes: {name: string}}
                    """))
        var limits = BatchLimits()
        limits.maxRows = 70
        let batcher = Batcher(compiled, limits: limits)
        batcher.spares = spares
        let assembler = RecordAssembler(routes: compiled.routes, sink: batcher)
        let parser = JSONPushParser(handler: assembler, name: "t", multipleValues: true)
        var rendered: [[[[String]]]] = []
        func cut() {
            let group = batcher.cut(checkpoint: Checkpoint(input: "t", records: 0, bytes: 0), rawBytes: 0, records: 0)
            rendered.append(group.batches.map(Self.render))
            spares?.give(rowsOf: group)
        }
        for id in 0..<500 {
            let title = String(repeating: "t", count: (id * 37) % 90)
            let tags = (0..<(id % 4)).map { "\"g\(($0 + id) % 9)\"" }.joined(separator: ", ")
            let line =
                #"{"id": \#(id), "title": "\#(title)", "score": \#(id % 3 == 0 ? "null" : "\(id).5"), "tags": [\#(tags)]}"#
            try Array((line + "\n").utf8).withUnsafeBytes { try parser.feed($0) }
            if batcher.isFull { cut() }
        }
        try parser.finish()
        cut()
        return rendered
    }

    /// A batch's rows as text, a cell each.
    static func render(_ batch: Batch) -> [[String]] {
        let rows = batch.rows
        return (0..<rows.rowCount).map { row in
            (0..<rows.columnCount).map { column in
                let cell = rows[row, column]
                switch cell {
                case .text, .blob: return rows.withText(cell) { String(decoding: $0, as: UTF8.self) }
                default: return "\(cell)"
                }
            } + ["\(rows.ordinals[row])"]
        }
    }

    /// The groups of a batcher that takes spares hold the rows of one that
    /// makes every arena anew.
    @Test func aBatcherTakingSparesCutsTheSameRows() throws {
        let spares = ArenaPool(capacity: 16)
        let reused = try groups(spares: spares)
        #expect(reused.count > 5)
        #expect(reused == (try groups(spares: nil)))
    }
}
