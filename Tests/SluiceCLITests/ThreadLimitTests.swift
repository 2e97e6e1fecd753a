import Foundation
import SluiceTestSupport
import Testing

/// Runs that the system gives fewer threads than they ask for. Each thread
/// sluice starts either has a way to do its work without it (the read-ahead
/// reads on the parse thread, the parse workers give way to one parse
/// thread, the WAL checkpoints go back to SQLite's own, the early
/// reference counts wait for the apply) or ends the run with a clear
/// error. Before, a refused thread ran its loop on the caller, which waited
/// for itself: the checkpointer's refused thread hung the store's open.
@Suite struct ThreadLimitTests {
    /// Each thread's stack reserves this much address space (glibc takes
    /// the stack limit as a new thread's stack size), so that an address
    /// space limit of `k` of them allows `k` threads or so.
    static let stackKiB = 1_000_000

    @Test func aRunGivenFewThreadsEndsInTheStoreOrInAClearError() throws {
        let crash = SyncCrashTests()
        let input = SyncCrashTests.events(Array(1...5_000), name: "threads.jsonl")
        let arguments = [
            "import", "--mapping", crash.mapping, "--threads", "2", "--batch-rows", "500", "--sort-mib", "1", input,
        ]
        let reference = TestPaths.temporaryDirectory().appendingPathComponent("reference.sqlite").path
        #expect(try runCommand(sluice, arguments + ["--into", reference]).status == 0)
        let expected = crash.dump(reference)

        var outcomes: [Int32] = []
        for threads in 1...10 {
            let store = TestPaths.temporaryDirectory().appendingPathComponent("store.sqlite").path
            // The program's own mappings and heap fit in the half GB above the stacks.
            let addressKiB = (threads * Self.stackKiB) + 700_000
            let command =
                "ulimit -s \(Self.stackKiB) && ulimit -v \(addressKiB) && exec "
                + ([sluice] + arguments + ["--into", store]).map { "'\($0)'" }.joined(separator: " ")
            let run = try runCommand("/usr/bin/timeout", ["120", "/bin/bash", "-c", command])
            outcomes.append(run.status)
            if run.status == 0 {
                #expect(crash.dump(store) == expected, "\(threads) threads: the store differs")
            } else {
                #expect(run.status == 74, "\(threads) threads: \(run.status) \(run.stderr)")
                #expect(run.stderr.contains(String(cString: strerror(EAGAIN))), "\(threads) threads: \(run.stderr)")
                #expect(crash.statuses(store).last != "running", "\(threads) threads: \(crash.statuses(store))")
            }
        }
        #expect(outcomes.first != 0, "one thread was enough: the limit did not hold")
        #expect(outcomes.last == 0, "\(outcomes)")
    }
}
