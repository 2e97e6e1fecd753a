import Foundation
import SluiceTestSupport
import Testing

@Suite struct MemoryBoundTests {
    /// A generated events workload (as Benchmarks/events.py writes it:
    /// shuffled keys, ten scalars, a nested actor, 0–5 tags), 150,000
    /// records (~75 MB), piped through standard input.
    @Test func importThroughStdinStaysUnderTheMemoryCap() throws {
        let directory = TestPaths.temporaryDirectory()
        let input = directory.appendingPathComponent("events.jsonl").path
        try writeEvents(150_000, to: input)
        let mapping = eventsMapping()
        let store = directory.appendingPathComponent("events.sqlite").path
        let (status, peakKiB) = try runMeasured(
            sluice, ["import", "--mapping", mapping, "--into", store, "--format", "jsonl", "-"], inputPath: input)
        #expect(status == 0)
        #expect(StoreReader(store).count("Event") == 150_000)
        #expect(peakKiB > 0 && peakKiB < 64 * 1024, "peak RSS \(peakKiB) KiB")
        print("memory bound: 150,000 records through stdin, peak RSS \(peakKiB) KiB")
    }
}
