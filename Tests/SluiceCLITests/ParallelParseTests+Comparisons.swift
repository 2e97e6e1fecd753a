import Foundation
import SluiceTestSupport
import Testing

/// The comparisons of the suite: runs on other numbers of threads against
/// the first (one thread), for their stores and statistics, their messages,
/// and their kills and resumes.
extension ParallelParseTests {
    /// A run's tables (``dump(_:)``) and statistics (``statistics(_:)``).
    struct Outcome: Equatable {
        var tables: [String: [String]]
        var statistics: NSDictionary
    }

    /// Each of `steps` steps run into each store of `paths` in turn, by
    /// `command(step, run, path, stats)` (`stats` its `--stats-json`) with
    /// the run of the same place in `runs`: every run succeeds, and each
    /// later store's tables (as `tables` reads them, by default
    /// ``dump(_:)``) and statistics are the first's, which
    /// `first(step, outcome)` checks. `named` says a run in a message.
    func eachRunGivesWhatTheFirstGives<Run>(
        steps: Int, runs: [Run], paths: [String], named: (Run) -> String,
        command: (_ step: Int, _ run: Run, _ path: String, _ stats: String) -> [String],
        tables: ((String) -> [String: [String]])? = nil, first: (_ step: Int, _ outcome: Outcome) -> Void
    ) throws {
        for step in 0..<steps {
            var reference: Outcome?
            for (run, path) in zip(runs, paths) {
                let stats = path + ".\(step).json"
                let result = try runCommand(sluice, command(step, run, path, stats))
                #expect(result.status == 0, "\(result.stderr)")
                let outcome = Outcome(tables: (tables ?? dump)(path), statistics: try statistics(stats))
                guard let reference else {
                    reference = outcome
                    first(step, outcome)
                    continue
                }
                #expect(outcome.tables == reference.tables, "step \(step), \(named(run))")
                #expect(outcome.statistics == reference.statistics, "step \(step), \(named(run))")
            }
        }
    }

    /// What `run(threads)` gives for each of `threads` (the first one
    /// thread): each later one's must equal the first's, which is returned.
    func eachGivesWhatTheFirstGives<Output: Equatable>(
        threads: [Int] = [1, 2, 4], _ run: (Int) throws -> Output
    ) throws -> Output? {
        let outputs = try threads.map(run)
        for (count, output) in zip(threads, outputs).dropFirst() {
            #expect(output == outputs[0], "--threads \(count)")
        }
        return outputs.first
    }

    /// `attempts` runs of `killed(path)`, each into a new store named after
    /// `name`, killed with SIGKILL after a `fraction` of `duration`
    /// (microseconds, an uninterrupted run's) and a quarter of it more
    /// each attempt; then `resumed(path)` must succeed and `check(path,
    /// attempt)` hold. At least one run must have been killed.
    func killedRunsResumed(
        _ name: String, attempts: Int = 3, duration: UInt32, fraction: UInt32 = 5,
        killed: (String) -> [String], resumed: (String) -> [String], check: (String, Int) throws -> Void
    ) throws {
        var interrupted = 0
        for attempt in 0..<attempts {
            let path = store("\(name)-\(attempt).sqlite")
            let process = Process()
            process.executableURL = URL(fileURLWithPath: sluice)
            process.arguments = killed(path)
            process.standardOutput = FileHandle.nullDevice
            process.standardError = FileHandle.nullDevice
            try process.run()
            usleep(duration / fraction + UInt32(attempt) * duration / 4)
            if process.isRunning {
                kill(process.processIdentifier, SIGKILL)
                interrupted += 1
            }
            process.waitUntilExit()
            let run = try runCommand(sluice, resumed(path))
            #expect(run.status == 0, "\(run.stderr)")
            try check(path, attempt)
        }
        #expect(interrupted > 0)
    }

    /// How long `arguments` take to run, in microseconds; the run must succeed.
    func timed(_ arguments: [String]) throws -> UInt32 {
        let started = Date()
        let clean = try runCommand(sluice, arguments)
        #expect(clean.status == 0, "\(clean.stderr)")
        return UInt32(Date().timeIntervalSince(started) * 1_000_000)
    }
}
