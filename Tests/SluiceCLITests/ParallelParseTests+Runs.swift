import Foundation
import SluiceTestSupport
import Testing

/// With parse workers the store thread only copies rows, and each sorted
/// run is written on a thread of its own (issue 28, point 3): many small
/// runs, kills while they are written, and a failure to write one give
/// what one thread gives.
extension ParallelParseTests {
    /// 1 MiB of sort memory: a run every few thousand records, each key
    /// recurring in many runs with different fields present.
    var smallRuns: [String] { ["--sort-mib", "1", "--batch-rows", "300"] }

    /// A first import that keeps record digests, then the same file again
    /// (which skips the units whose keys agree and parses the rest): with
    /// two threads every table, the digest tables included, and the
    /// statistics are those of one thread.
    @Test func manySmallRunsWrittenAsideGiveTheStoreOfOneThread() throws {
        let events = input("runs.jsonl", count: 12_000)
        let threads = [1, 2]
        let paths = threads.map { store("runs-\($0).sqlite") }
        try digestStores(paths)
        try eachRunGivesWhatTheFirstGives(
            steps: 2, runs: threads, paths: paths, named: { "--threads \($0)" },
            command: { _, count, path, stats in
                digestArguments(path, events, threads: count, smallRuns + ["--stats-json", stats])
            },
            first: { step, first in
                #expect(first.tables["Event"]?.count ?? 0 > 6_000, "step \(step)")
                #expect(first.tables["Actor"]?.count == 400, "step \(step)")
            })
    }

    /// Two threads killed while the input is read (runs being written
    /// aside), resumed with two: the rows of one uninterrupted thread.
    @Test func aRunKilledWhileWritingRunsAsideResumesToTheStoreOfOneThread() throws {
        let events = input("runs-kill.jsonl", count: 30_000)
        let reference = store("runs-kill-reference.sqlite")
        let duration = try timed(arguments(reference, events, threads: 2, smallRuns))
        let one = store("runs-kill-one.sqlite")
        #expect(try runCommand(sluice, arguments(one, events, threads: 1, smallRuns)).status == 0)
        let expected = dump(one).filter { $0.key != "_sluice_checkpoints" }
        #expect(dump(reference).filter { $0.key != "_sluice_checkpoints" } == expected)
        // Within the first half: the input is still being read.
        try killedRunsResumed(
            "runs-kill", attempts: 2, duration: duration, fraction: 8,
            killed: { arguments($0, events, threads: 2, smallRuns) },
            resumed: { arguments($0, events, threads: 2, smallRuns + ["--resume"]) },
            check: { path, attempt in
                #expect(dump(path).filter { $0.key != "_sluice_checkpoints" } == expected, "attempt \(attempt)")
            })
    }

    /// Runs that fill the sort directory (a 256 KiB tmpfs): a run written
    /// aside fails as a run written by the store thread does, with the same
    /// message (but for the run file's random name) and exit status.
    @Test(.enabled(if: DiskFullTests.canMount, "mounting a small tmpfs needs root"))
    func aRunWrittenAsideThatFillsTheDiskFailsAsOneThreadFails() throws {
        let events = input("runs-full.jsonl", count: 30_000)
        let disk = TestPaths.temporaryDirectory().path
        #expect(try runCommand("/bin/mount", ["-t", "tmpfs", "-o", "size=256k", "tmpfs", disk]).status == 0)
        defer { _ = try? runCommand("/bin/umount", [disk]) }
        let first = try eachGivesWhatTheFirstGives(threads: [1, 2]) { threads in
            let path = store("runs-full-\(threads).sqlite")
            let run = try runCommand(
                sluice, arguments(path, events, threads: threads, smallRuns + ["--sort-dir", disk]))
            #expect(run.status == 74, "\(run.stderr)")
            return run.stderr.replacingOccurrences(
                of: #"sluice-run-[^:]*"#, with: "sluice-run-", options: .regularExpression)
        }
        #expect(first?.contains("writing a sort run: No space left on device") == true, "\(first ?? "")")
    }
}
