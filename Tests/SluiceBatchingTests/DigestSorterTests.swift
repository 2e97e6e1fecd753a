import Foundation
import SluiceRecords
import SluiceTestSupport
import Testing

@testable import SluiceBatching

/// The digest join's sorter: entries sorted in memory or through spilled
/// runs give the same order as sorting them all at once.
@Suite struct DigestSorterTests {
    /// `count` entries with pseudo-random digests (some repeated) and their
    /// index as payload.
    func entries(_ count: Int, seed: UInt64) -> [DigestEntry] {
        var state = seed
        func next() -> UInt64 {
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            return state
        }
        return (0..<count).map { index in
            // Every seventh entry repeats a digest in its high word only, every
            // eleventh repeats one whole, so ties and the low word both decide.
            let high = index % 7 == 0 ? 42 : next()
            let low = index % 11 == 0 ? 7 : next()
            return DigestEntry(digest: UnitDigest(high: high, low: low), payload: UInt64(index))
        }
    }

    func drain(_ sorted: SortedDigests) throws -> [DigestEntry] {
        var out: [DigestEntry] = []
        while let (entry, bytes) = try sorted.next() {
            #expect(bytes == Self.bytes(of: entry))
            out.append(entry)
        }
        return out
    }

    /// Each entry's bytes: none for some, up to 300 for others, from its payload.
    static func bytes(of entry: DigestEntry) -> [UInt8] {
        (0..<Int(entry.payload % 5 == 0 ? 0 : entry.payload % 301)).map {
            UInt8(truncatingIfNeeded: $0 &+ Int(entry.payload))
        }
    }

    /// Budgets from one that holds everything down to one that spills every
    /// two entries: the same order, every entry once.
    @Test(arguments: [1 << 30, 24 * 1000, 24 * 97, 64, 600])
    func spilledRunsMergeInOrder(budget: Int) throws {
        let directory = TestPaths.temporaryDirectory()
        let all = entries(5_000, seed: UInt64(budget))
        let sorter = DigestSorter(directory: directory.path, memoryBytes: budget)
        for entry in all { try sorter.add(entry, bytes: Self.bytes(of: entry)) }
        #expect(sorter.count == all.count)
        let sorted = try sorter.sorted()
        #expect(sorted.runCount <= DigestSorter.mergeWidth)
        let merged = try drain(sorted)
        #expect(merged == all.sorted())
    }

    /// Past ``DigestSorter/mergeWidth`` runs the smallest are merged first,
    /// as often as it takes, down to the width: every entry once, with its
    /// bytes, in order. Budgets that spill 3,881 runs (merged many times
    /// over) and 129 (one merge of two).
    @Test(arguments: [64, 6_000])
    func manyRunsAreMergedDownToTheWidth(budget: Int) throws {
        let directory = TestPaths.temporaryDirectory()
        let all = entries(5_000, seed: 5)
        let sorter = DigestSorter(directory: directory.path, memoryBytes: budget)
        for entry in all { try sorter.add(entry, bytes: Self.bytes(of: entry)) }
        #expect(sorter.spilledRuns > DigestSorter.mergeWidth)
        let sorted = try sorter.sorted()
        #expect(sorted.runCount == DigestSorter.mergeWidth)
        #expect(try drain(sorted) == all.sorted())
    }

    /// Entries whose bytes are larger than a run's read buffer (up to three
    /// times it) beside entries of none, spilled in several runs: each is
    /// read whole, and reading past an entry's bytes (``SortedDigests/nextEntry()``)
    /// keeps the next entry's intact.
    @Test func bytesLargerThanTheReadBufferAndSkippedBytes() throws {
        let directory = TestPaths.temporaryDirectory()
        let all = entries(60, seed: 9)
        func bytes(_ entry: DigestEntry) -> [UInt8] {
            let count = entry.payload % 3 == 0 ? 0 : Int(entry.payload) * DigestSorter.readBytes / 20 + 7
            return (0..<count).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ Int(entry.payload)) }
        }
        let sorter = DigestSorter(directory: directory.path, memoryBytes: 400_000)
        for entry in all { try sorter.add(entry, bytes: bytes(entry)) }
        let sorted = try sorter.sorted()
        var merged: [DigestEntry] = []
        while true {
            // Every other entry read without its bytes.
            if merged.count % 2 == 0 {
                guard let (entry, read) = try sorted.next() else { break }
                #expect(read == bytes(entry))
                merged.append(entry)
            } else {
                guard let entry = try sorted.nextEntry() else { break }
                merged.append(entry)
            }
        }
        #expect(merged == all.sorted())
    }

    /// No entries: nothing, spilled or not.
    @Test func emptyGivesNothing() throws {
        let directory = TestPaths.temporaryDirectory()
        #expect(try drain(try DigestSorter(directory: directory.path).sorted()).isEmpty)
    }

    /// The entries held never take more room than the budget (an array's
    /// own doubling took an 8 MB budget to 10.5 MB), and a sorter that has
    /// spilled holds none once sorted: the merge keeps only its buffers.
    @Test func heldEntriesStayWithinTheBudget() throws {
        let directory = TestPaths.temporaryDirectory()
        let budget = 8 << 20
        let sorter = DigestSorter(directory: directory.path, memoryBytes: budget)
        var most = 0
        for entry in entries(500_000, seed: 3) {
            try sorter.add(entry)
            most = max(most, sorter.heldMemory)
        }
        #expect(most <= budget + (8 << 10), "\(most) bytes held for a budget of \(budget)")
        let sorted = try sorter.sorted()
        #expect(sorter.heldMemory == 0)
        var merged = 0
        while try sorted.next() != nil { merged += 1 }
        #expect(merged == 500_000)
    }

    /// A directory that does not exist fails the first spill with its path.
    @Test func missingDirectoryIsAnError() throws {
        let sorter = DigestSorter(directory: "/nonexistent/sluice", memoryBytes: 48)
        #expect(throws: SpillError.self) {
            for entry in entries(10, seed: 1) { try sorter.add(entry) }
        }
    }
}
