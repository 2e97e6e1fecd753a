import Foundation
import SluiceBatching
import SluiceParsers
@_spi(Machinery) import SluiceRecords
import SluiceTestSupport
import Testing

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
