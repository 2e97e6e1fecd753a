import Foundation
import SluiceTestSupport
import Testing

extension ParallelParseTests {
    /// `--threads 16` holds little more than one thread. Each of its threads
    /// (16 workers, the forwarder, a thread per run written aside) had a
    /// glibc malloc arena of its own, keeping what was freed into it: on
    /// 60,000 generated events (debug build) 16 threads peaked 5.5 to 6.4
    /// MiB above one thread; the command now lets its threads share one
    /// arena, and they peak 2.8 to 3.5 MiB above it (the bound lies
    /// halfway).
    @Test func sixteenThreadsPeakNearOneThread() throws {
        let directory = TestPaths.temporaryDirectory()
        let input = directory.appendingPathComponent("events.jsonl").path
        try writeEvents(60_000, to: input)
        let mapping = eventsMapping()
        func peak(threads: Int) throws -> Int {
            let store = directory.appendingPathComponent("threads\(threads).sqlite").path
            let (status, peakKiB) = try runMeasured(
                sluice, ["import", "--mapping", mapping, "--into", store, "--threads", "\(threads)", input],
                inputPath: "/dev/null")
            #expect(status == 0)
            #expect(StoreReader(store).count("Event") == 60_000)
            return peakKiB
        }
        let one = try peak(threads: 1)
        let sixteen = try peak(threads: 16)
        print("60,000 events: --threads 1 peak \(one) KiB, --threads 16 peak \(sixteen) KiB")
        #expect(sixteen - one < 4_608, "--threads 1: \(one) KiB, --threads 16: \(sixteen) KiB")
    }
}
