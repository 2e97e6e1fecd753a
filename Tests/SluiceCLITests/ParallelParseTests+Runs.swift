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
        for step in 0..<2 {
            var reference: (tables: [String: [String]], statistics: NSDictionary)?
            for (count, path) in zip(threads, paths) {
                let stats = path + ".\(step).json"
                let run = try runCommand(
                    sluice, digestArguments(path, events, threads: count, smallRuns + ["--stats-json", stats]))
                #expect(run.status == 0, "\(run.stderr)")
                let result = (dump(path), try statistics(stats))
                guard let reference else {
                    reference = result
                    #expect(result.0["Event"]?.count ?? 0 > 6_000, "step \(step)")
                    #expect(result.0["Actor"]?.count == 400, "step \(step)")
                    continue
                }
                #expect(result.0 == reference.tables, "step \(step), --threads \(count)")
                #expect(result.1 == reference.statistics, "step \(step), --threads \(count)")
            }
        }
    }

    /// Two threads killed while the input is read (runs being written
    /// aside), resumed with two: the rows of one uninterrupted thread.
    @Test func aRunKilledWhileWritingRunsAsideResumesToTheStoreOfOneThread() throws {
        let events = input("runs-kill.jsonl", count: 30_000)
        let reference = store("runs-kill-reference.sqlite")
        let started = Date()
        let clean = try runCommand(sluice, arguments(reference, events, threads: 2, smallRuns))
        #expect(clean.status == 0, "\(clean.stderr)")
        let duration = UInt32(Date().timeIntervalSince(started) * 1_000_000)
        let one = store("runs-kill-one.sqlite")
        #expect(try runCommand(sluice, arguments(one, events, threads: 1, smallRuns)).status == 0)
        let expected = dump(one).filter { $0.key != "_sluice_checkpoints" }
        #expect(dump(reference).filter { $0.key != "_sluice_checkpoints" } == expected)
        var interrupted = 0
        for attempt in 0..<2 {
            let path = store("runs-kill-\(attempt).sqlite")
            let process = Process()
            process.executableURL = URL(fileURLWithPath: sluice)
            process.arguments = arguments(path, events, threads: 2, smallRuns)
            process.standardOutput = FileHandle.nullDevice
            process.standardError = FileHandle.nullDevice
            try process.run()
            // Within the first half: the input is still being read.
            usleep(duration / 8 + UInt32(attempt) * duration / 4)
            if process.isRunning {
                kill(process.processIdentifier, SIGKILL)
                interrupted += 1
            }
            process.waitUntilExit()
            let resumed = try runCommand(sluice, arguments(path, events, threads: 2, smallRuns + ["--resume"]))
            #expect(resumed.status == 0, "\(resumed.stderr)")
            #expect(dump(path).filter { $0.key != "_sluice_checkpoints" } == expected, "attempt \(attempt)")
        }
        #expect(interrupted > 0)
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
        var messages: [String] = []
        for threads in [1, 2] {
            let path = store("runs-full-\(threads).sqlite")
            let run = try runCommand(
                sluice, arguments(path, events, threads: threads, smallRuns + ["--sort-dir", disk]))
            #expect(run.status == 74, "\(run.stderr)")
            messages.append(
                run.stderr.replacingOccurrences(
                    of: #"sluice-run-[^:]*"#, with: "sluice-run-", options: .regularExpression))
        }
        #expect(messages[0].contains("writing a sort run: No space left on device"), "\(messages[0])")
        #expect(messages[1] == messages[0])
    }
}
