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
