import Foundation
import Sluice
import SluiceTestSupport
import Testing

/// A run without `--threads` parses on the default number of threads, the
/// cores the process may use (``ImportOptions/defaultThreads``), and gives
/// what `--threads 1` gives.
extension ParallelParseTests {
    /// `--threads` left out, or `--threads 1`.
    func defaultArguments(_ store: String, _ input: String, one: Bool, _ extra: [String]) -> [String] {
        ["import", "--mapping", mapping, "--into", store, "-q"] + (one ? ["--threads", "1"] : []) + extra + [input]
    }

    /// Two stores that share a digest secret, one run without `--threads`
    /// and one with `--threads 1`, compared table by table and row for row
    /// (the digest tables and checkpoints included) and in the statistics
    /// after each step: records whose keys repeat with different fields
    /// (merged field by field in input order) with `--no-skip`, then a day's
    /// records that keeps digests, the same file again (every unit skipped),
    /// and the next day with `--delete-missing` (its new and changed units
    /// read at their places).
    @Test func aRunWithoutThreadsGivesTheStoreOfOneThread() throws {
        #expect(ImportOptions().threads == ImportOptions.defaultThreads)
        let repeated = input("default-repeated.jsonl", count: 6_000)
        let day0 = input("default-day0.jsonl", distinct: true)
        let day1 = try nextDay(day0, "default-day1.jsonl")
        let paths = [store("default-threads.sqlite"), store("default-one.sqlite")]
        try digestStores(paths)
        let steps: [(input: String, extra: [String])] = [
            (repeated, ["--no-skip"]), (day0, []), (day0, []), (day1, ["--delete-missing"]),
        ]
        try eachRunGivesWhatTheFirstGives(
            steps: steps.count, runs: [false, true], paths: paths,
            named: { $0 ? "--threads 1" : "without --threads" },
            command: { number, one, path, stats in
                defaultArguments(path, steps[number].input, one: one, steps[number].extra + ["--stats-json", stats])
            },
            first: { number, first in
                #expect(first.tables["Actor"]?.count == 400, "step \(number)")
                let unchanged = first.statistics["unchangedRecords"] as? Int ?? 0
                #expect(number >= 2 ? unchanged > 9_000 : unchanged == 0, "step \(number): \(unchanged)")
            })
    }
}
