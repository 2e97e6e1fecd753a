import Foundation
import SluiceBatching
import SluiceParsers
@_spi(Machinery) import SluiceRecords
import SluiceTestSupport
import Testing

/// Feeds `count` JSON records `{"id": i, "text": "..."}` through a batcher,
/// one record a feed, cutting a group whenever it is full.
func batches(count: Int, limits: BatchLimits, textSize: Int = 10) throws -> [BatchGroup] {
    let compiled = try CompiledMapping(Mapping.parse(yaml: "entities: {A: {records: $, key: id, attributes: {id: integer, text: string}}}"))
    let batcher = Batcher(compiled, limits: limits)
    var groups: [BatchGroup] = []
    let assembler = RecordAssembler(routes: compiled.routes, sink: batcher)
    let parser = JSONPushParser(handler: assembler, name: "t", multipleValues: true)
    let text = String(repeating: "x", count: textSize)
    for index in 0..<count {
        try Array("{\"id\": \(index), \"text\": \"\(text)\"}\n".utf8).withUnsafeBytes { try parser.feed($0) }
        if batcher.isFull {
            groups.append(batcher.cut(checkpoint: Checkpoint(input: "t", records: assembler.recordCount, bytes: 0), rawBytes: 0, records: 0))
        }
    }
    try parser.finish()
    if !batcher.isEmpty {
        groups.append(batcher.cut(checkpoint: Checkpoint(input: "t", records: assembler.recordCount, bytes: 0), rawBytes: 0, records: 0))
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

@Suite struct BlockingQueueTests {
    @Test func aFullQueueBlocksTheProducerUntilTheConsumerTakes() async throws {
        let queue = BlockingQueue<Int>(capacity: 2)
        let pushed = LockedCounter()
        let producer = Thread {
            for value in 0..<5 {
                _ = queue.push(value)
                pushed.increment()
            }
            queue.close()
        }
        producer.start()
        try await Task.sleep(nanoseconds: 200_000_000)
        #expect(pushed.value == 2)
        var taken: [Int] = []
        while let value = queue.pop() { taken.append(value) }
        #expect(taken == [0, 1, 2, 3, 4])
    }

    @Test func aQueueFullByWeightBlocksButAlwaysTakesOneItem() async throws {
        // Weights 6, 5, 20, 1 with a limit of 10: 6 goes in, 5 would make
        // 11 and waits; 20 alone exceeds the limit but enters an empty queue.
        let queue = BlockingQueue<Int>(capacity: 10, weightLimit: 10) { $0 }
        let pushed = LockedCounter()
        let producer = Thread {
            for value in [6, 5, 20, 1] {
                _ = queue.push(value)
                pushed.increment()
            }
            queue.close()
        }
        producer.start()
        try await Task.sleep(nanoseconds: 200_000_000)
        #expect(pushed.value == 1)
        #expect(queue.pop() == 6)
        try await Task.sleep(nanoseconds: 200_000_000)
        #expect(pushed.value == 2)
        #expect(queue.pop() == 5)
        try await Task.sleep(nanoseconds: 200_000_000)
        #expect(pushed.value == 3)
        var taken: [Int] = []
        while let value = queue.pop() { taken.append(value) }
        #expect(taken == [20, 1])
    }

    @Test func failingReleasesABlockedProducer() async throws {
        let queue = BlockingQueue<Int>(capacity: 1)
        #expect(queue.push(1))
        let result = LockedCounter()
        let producer = Thread {
            if !queue.push(2) { result.increment() }
        }
        producer.start()
        try await Task.sleep(nanoseconds: 100_000_000)
        queue.fail()
        try await Task.sleep(nanoseconds: 100_000_000)
        #expect(result.value == 1)
        #expect(queue.pop() == nil)
    }
}
