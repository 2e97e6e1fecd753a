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
        for (number, step) in steps.enumerated() {
            var results: [(tables: [String: [String]], statistics: NSDictionary)] = []
            for (path, one) in zip(paths, [false, true]) {
                let stats = path + ".\(number).json"
                let run = try runCommand(
                    sluice, defaultArguments(path, step.input, one: one, step.extra + ["--stats-json", stats]))
                #expect(run.status == 0, "\(run.stderr)")
                results.append((dump(path), try statistics(stats)))
            }
            #expect(results[0].tables["Actor"]?.count == 400, "step \(number)")
            #expect(results[0].tables == results[1].tables, "step \(number)")
            #expect(results[0].statistics == results[1].statistics, "step \(number)")
            let unchanged = results[0].statistics["unchangedRecords"] as? Int ?? 0
            #expect(number >= 2 ? unchanged > 9_000 : unchanged == 0, "step \(number): \(unchanged)")
        }
    }
}
