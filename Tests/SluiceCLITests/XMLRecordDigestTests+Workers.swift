import Foundation
import SluiceTestSupport
import Testing

/// The hash pass of a run that skips XML on the parse workers
/// (docs/record-digests.md, "A run that skips"): with `--threads` above 1
/// the workers hash the elements, and the forwarder has the document check
/// read each of their items, in input order. Each run must leave the store,
/// the counts and the errors of one thread.
extension XMLRecordDigestTests {
    /// Day 0 of `count` events in two groups, and day 1 without every tenth,
    /// every seventh changed and 200 new, reversed: documents of several of
    /// the workers' items (each event about 170 bytes, an item 256 KiB or
    /// more).
    static func largeDays(_ count: Int) -> (day0: String, day1: String) {
        let tags = ["<group>", "<group name=\"second\">"]
        let half = count / 2
        let day0 = tags.indices.map { group in
            (tags[group], (1...half).map { event($0 + half * group) })
        }
        let day1 = tags.indices.map { group in
            var events = (1...half).filter { $0 % 10 != 0 }.map {
                event($0 + half * group, score: $0 % 7 == 0 ? -$0 : nil)
            }
            events += (1...100).map { event(count + $0 + 100 * group) }
            return (tags[group], Array(events.reversed()))
        }
        return (document(day0), document(day1))
    }

    /// Day 0, day 1 with `--delete-missing`, then day 1 again, on 2 and 3
    /// threads, whole and in chunks of 7 bytes (start tags cut, so that an
    /// item is never cut inside one), against one thread: the same elements
    /// skipped, and the rows of a run that parses everything.
    @Test(arguments: [(2, 65_536), (3, 65_536), (2, 7)])
    func aHashPassOnTheWorkersSkipsAsOneThreadDoes(threads: Int, chunk: Int) throws {
        let (day0, day1) = Self.largeDays(6_000)
        let (first, next) = (file(day0), file(day1))
        let steps = [[first], ["--delete-missing", next], ["--delete-missing", next]]
        let (skipping, parsing, single) = (store(), store(), store())
        var unchanged: [Int] = []
        for (index, step) in steps.enumerated() {
            let options = ["--chunk-size", "\(chunk)"]
            #expect(try run(single, options + ["--threads", "1"] + step).status == 0)
            let skipped = try run(skipping, options + ["--threads", "\(threads)"] + step)
            #expect(skipped.status == 0, "\(skipped.stderr)")
            unchanged.append(try unchangedRecords(skipping))
            #expect(unchanged.last == (try unchangedRecords(single)), "step \(index + 1): skipped otherwise")
            #expect(try run(parsing, ["--no-skip", "--threads", "1"] + step).status == 0)
            #expect(rows(skipping) == rows(parsing), "after step \(index + 1): \(step)")
        }
        // Day 1 keeps 5,400 of day 0's events, less the 772 changed; then all 5,600 of its own.
        #expect(unchanged == [0, 4_628, 5_600])
    }

    /// Damage the document check finds in a later item of the workers
    /// (between skipped elements, an end tag, the end of the input): a run
    /// on 2 threads fails as one thread and a full run fail, in the same
    /// words (file, line:column, byte, record), the store left the same.
    @Test func damageInALaterItemFailsAsOneThreadFails() throws {
        let (day0, _) = Self.largeDays(6_000)
        let base = store()
        for _ in 0..<2 { #expect(try run(base, [file(day0)]).status == 0) }
        #expect(try unchangedRecords(base) == 6_000, "the second run skips every element")
        // After event 4,500, in the second group, beyond the first items.
        let bare = day0.split(separator: "\n", omittingEmptySubsequences: false).map {
            $0.hasPrefix("<event id=\"4500\" ") ? $0 + " & " : String($0)
        }
        let cases: [(name: String, text: String)] = [
            ("a bare &", bare.joined(separator: "\n")),
            ("a wrong end tag", day0.replacingOccurrences(of: "</events>", with: "</evnts>")),
            ("a truncated file", String(day0.prefix(day0.count * 4 / 5))),
            ("content after the root", day0 + "junk\n"),
        ]
        for damage in cases {
            #expect(damage.text != day0, "\(damage.name): the damage is in the document")
            let input = file(damage.text)
            var messages: [String] = []
            var stores: [[[[String?]]]] = []
            for options in [["--threads", "1"], ["--threads", "2"], ["--threads", "1", "--no-skip"]] {
                let target = store()
                try FileManager.default.copyItem(atPath: base, toPath: target)
                let result = try run(target, options + [input])
                #expect(result.status != 0, "\(damage.name), \(options): \(result.stdout)")
                messages.append(result.stderr.replacingOccurrences(of: target, with: "STORE"))
                stores.append(rows(target))
            }
            #expect(messages[0] == messages[1], "\(damage.name): one thread and two report otherwise")
            #expect(messages[1] == messages[2], "\(damage.name): a skipping run and a full run report otherwise")
            #expect(messages[1].contains(input + ":"), "\(damage.name): \(messages[1])")
            #expect(stores[0] == stores[1] && stores[1] == stores[2], "\(damage.name): the stores differ")
        }
    }
}
