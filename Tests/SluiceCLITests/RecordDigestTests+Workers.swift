import Foundation
import SluiceTestSupport
import Testing

/// The hash pass of a run that skips on the parse workers
/// (docs/record-digests.md, "A run that skips"): with `--threads` above 1
/// the workers hash the units of a JSON input; each run must leave the
/// store, the counts and the errors one thread gives.
extension RecordDigestTests {
    /// Day 0 of `count` events and day 1 without every tenth, every seventh
    /// changed and 200 new, reversed: files of several of the workers'
    /// items (each event about 130 bytes, an item 256 KiB or more).
    func largeDays(_ count: Int) -> (day0: String, day1: String) {
        let day0 = file((1...count).map { Self.event($0) })
        var day1 = (1...count).filter { $0 % 10 != 0 }.map { Self.event($0, score: $0 % 7 == 0 ? -$0 : nil) }
        day1 += (count + 1...count + 200).map { Self.event($0) }
        return (day0, file(day1.reversed()))
    }

    /// Day 0 then day 1 with `--delete-missing`, then day 1 again, on 2 and
    /// 3 threads (the hash pass on the workers), against the same runs with
    /// `--no-skip` on one thread: the same rows, deletions and unchanged
    /// records one thread skips.
    @Test(arguments: kinds, [2, 3]) func aHashPassOnTheWorkersSkipsAsOneThreadDoes(kind: Kind, threads: Int) throws {
        let (day0, day1) = largeDays(6_000)
        let steps = [[day0], ["--delete-missing", day1], ["--delete-missing", day1]]
        let (skipping, parsing, single) = (try store(kind), try store(kind), try store(kind))
        var unchanged: [Int] = []
        for (index, step) in steps.enumerated() {
            _ = try run(single, ["--threads", "1"] + step)
            let expected = try unchangedRecords(single)
            _ = try run(skipping, ["--threads", "\(threads)"] + step)
            unchanged.append(try unchangedRecords(skipping))
            #expect(unchanged.last == expected, "step \(index + 1): \(threads) threads skipped otherwise than one")
            _ = try run(parsing, ["--no-skip", "--threads", "1"] + step)
            #expect(rows(skipping) == rows(parsing), "after step \(index + 1): \(step)")
            #expect(try deleted(skipping) == deleted(parsing), "after step \(index + 1): \(step)")
        }
        // Day 1 keeps 5,400 of day 0's events, less the 772 changed; then all 5,600 of its own.
        #expect(unchanged == [0, 4_628, 5_600])
    }

    /// The same over standard input on 2 threads: the workers hash the
    /// spooled stream's units.
    @Test(arguments: kinds) func aHashPassOnTheWorkersOverStandardInputSkipsAsOneThreadDoes(kind: Kind) throws {
        let (day0, day1) = largeDays(6_000)
        let threads = ["--threads", "2"]
        let unchanged = try pipedDifferential(
            kind,
            [
                (threads, try bytes(day0)), (threads + ["--delete-missing"], try bytes(day1)),
                (threads + ["--delete-missing"], try bytes(day1)),
            ])
        #expect(unchanged == [0, 4_628, 5_600])
    }

    /// A changed record that does not parse, in a later item of the
    /// workers, and a file that ends inside its last record (the scanner's
    /// end finds it): reported on 2 threads as on one, in the same words
    /// (file, line:column, record number), the store left as one thread
    /// leaves it.
    @Test(arguments: kinds) func aBrokenRecordAfterAHashPassOnTheWorkersIsReportedAsOneThreadReportsIt(
        kind: Kind
    ) throws {
        let (day0, _) = largeDays(6_000)
        var lines = (1...6_000).map { Self.event($0) }
        lines[4_599] = #"{"id": 4600, "kind": "k1", "score": }"#
        let brokenInside = file(lines)
        lines[4_599] = Self.event(4_600, score: 1)
        let cutShort = TestPaths.file(
            "cut-\(UUID().uuidString).jsonl", lines.joined(separator: "\n") + "\n" + #"{"id": 6001, "kind": "k"#)
        for (broken, location) in [(brokenInside, ":4600:"), (cutShort, ":6001:")] {
            var messages: [String] = []
            var stores: [[[[String?]]]] = []
            for threads in ["1", "2"] {
                let target = try store(kind)
                _ = try run(target, [day0])
                let result = try runCommand(
                    sluice, ["import", "--mapping", Self.mapping, "--into", target, "--threads", threads, broken])
                #expect(result.status != 0, "\(threads) threads: \(result.stdout)")
                #expect(result.stderr.contains(broken + location), "\(threads) threads: \(result.stderr)")
                messages.append(result.stderr.replacingOccurrences(of: target, with: "STORE"))
                stores.append(rows(target))
            }
            #expect(messages[0] == messages[1], "\(location): one thread and two report otherwise")
            let same = stores[0] == stores[1]
            #expect(same, "\(location): one thread and two leave different stores")
        }
    }
}
