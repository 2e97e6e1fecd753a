import Foundation
import SluiceTestSupport
import Testing

/// `--threads N` (issue 28, point 1): a run that parses on several threads
/// gives what a run on one gives: every table row for row (checkpoints
/// included), the statistics, and the errors with their locations.
@Suite(.serialized) struct ParallelParseTests {
    /// Actors recur in many records with different fields present, so their
    /// rows are the field-by-field merge of records far apart in the input
    /// (in different items of the parallel parse); tags are link rows.
    let mapping = TestPaths.file(
        "parallel.yml",
        """
        entities:
          Event:
            records: $
            key: id
            attributes: {id: integer, kind: string, score: integer, text: string}
            relationships:
              actor: {entity: Actor, source: actor}
              tags: {entity: Tag, source: "tags[*]", many: true, missing: stub}
          Actor:
            key: id
            attributes: {id: integer, login: string, rank: integer, note: string}
          Tag:
            key: name
            attributes: {name: string}
        """)

    /// `count` records of about 150 bytes; record `bad`, when given, is
    /// replaced by `badLine`. With `distinct`, record n has key n but every
    /// tenth repeats the key of one far before it, and each actor's fields
    /// are the same in all its records: most of the units a digest run
    /// keeps then agree on every key, and a later run skips them.
    func input(
        _ name: String, count: Int = 12_000, bad: Int? = nil, badLine: String = "", distinct: Bool = false
    ) -> String {
        var lines: [String] = []
        var state: UInt64 = 7
        for index in 1...count {
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            var id = Int(state >> 33) % 9_000
            let actor = Int(state >> 20) % 400
            // Each field of an actor is present in some of its records only.
            var fields = [#""id": \#(actor)"#]
            if distinct {
                id = index % 10 == 0 ? index / 2 : index
                fields.append(#""login": "a\#(actor)", "rank": \#(actor)"#)
            } else {
                if index % 3 == 0 { fields.append(#""login": "a\#(actor)-\#(index)""#) }
                if index % 5 == 0 { fields.append(#""rank": \#(index)"#) }
                if index % 7 == 0 { fields.append(#""note": "seen at \#(index)""#) }
            }
            let tags = (0..<(index % 3)).map { #""t\#((index + $0) % 11)""# }.joined(separator: ", ")
            lines.append(
                index == bad
                    ? badLine
                    : #"{"id": \#(id), "kind": "k\#(index % 7)", "score": \#(index), "actor": {\#(fields.joined(separator: ", "))}, "tags": [\#(tags)], "text": "record \#(index)"}"#
            )
        }
        return TestPaths.file(name, lines.joined(separator: "\n") + "\n")
    }

    func arguments(_ store: String, _ input: String, threads: Int, _ extra: [String] = []) -> [String] {
        ["import", "--mapping", mapping, "--into", store, "--no-skip", "--threads", "\(threads)", "-q"] + extra + [
            input
        ]
    }

    func store(_ name: String) -> String { TestPaths.temporaryDirectory().appendingPathComponent(name).path }

    /// Every table but the ledger's runs (which hold times), each row as
    /// text, sorted.
    func dump(_ store: String) -> [String: [String]] {
        let reader = StoreReader(store)
        var tables: [String: [String]] = [:]
        for row in reader.rows("SELECT name FROM sqlite_master WHERE type = 'table' AND name != '_sluice_runs'") {
            guard let table = row.first ?? nil else { continue }
            tables[table] = reader.rows("SELECT * FROM \"\(table)\"").map {
                $0.map { $0 ?? "NULL" }.joined(separator: "|")
            }
            .sorted()
        }
        return tables
    }

    /// The statistics of `--stats-json`, without the seconds.
    func statistics(_ path: String) throws -> NSDictionary {
        let data = try Data(contentsOf: URL(fileURLWithPath: path))
        guard var object = try JSONSerialization.jsonObject(with: data) as? [String: Any] else { return [:] }
        object.removeValue(forKey: "seconds")
        return object as NSDictionary
    }

    @Test func severalThreadsGiveTheStoreAndStatisticsOfOne() throws {
        let events = input("events.jsonl")
        // 1 KiB chunks: records are split across chunks, and each 256 KiB item ends inside one.
        let runs = [(1, 65_536), (2, 1_024), (3, 65_536), (5, 1_024)]
        let paths = runs.map { store("threads-\($0.0).sqlite") }
        try eachRunGivesWhatTheFirstGives(
            steps: 1, runs: runs, paths: paths, named: { "--threads \($0.0)" },
            command: { _, run, path, stats in
                arguments(path, events, threads: run.0, ["--chunk-size", "\(run.1)", "--stats-json", stats])
            },
            first: { _, first in
                #expect(first.tables["Event"]?.count ?? 0 > 6_000)
                #expect(first.tables["Actor"]?.count == 400)
                // The actors' rows merge records from every part of the input.
                #expect(StoreReader(paths[0]).count("Actor") == 400)
                #expect(first.tables["_sluice_checkpoints"]?.count == 1)
            })
    }

    /// An error in the middle of an item, one at the input's end, and a
    /// record whose mapping fails after its event's row (its actor's key is
    /// no integer): the same message (file, line:column, byte, record
    /// number) and exit status, and the same store: every record before the
    /// failed one committed, none of its rows, whatever cut the groups (the
    /// checkpoint, where a resume starts reading again, is left out).
    @Test(arguments: [
        ("malformed", 7_001, #"{"id": 12, "kind": nope}"#), ("truncated", 12_000, #"{"id": 3, "kind": "#),
        ("unmapped", 7_001, #"{"id": 12, "kind": "k", "score": 1, "actor": {"id": "x"}, "tags": ["t1"]}"#),
    ])
    func errorsAreReportedAsOneThreadReportsThem(name: String, bad: Int, line: String) throws {
        let events = input("\(name).jsonl", bad: bad, badLine: line)
        let before = input("\(name)-before.jsonl", count: bad - 1)
        let expected = store("\(name)-expected.sqlite")
        #expect(try runCommand(sluice, arguments(expected, before, threads: 1)).status == 0)
        // The project's tables: a failed run keeps no counts of its own.
        func rows(_ path: String) -> [String: [String]] {
            dump(path).filter { ["Event", "Actor", "Tag", "Event_tags"].contains($0.key) }
        }
        struct Failure: Equatable {
            var message: String
            var tables: [String: [String]]
        }
        let first = try eachGivesWhatTheFirstGives { threads in
            let path = store("\(name)-\(threads).sqlite")
            let run = try runCommand(sluice, arguments(path, events, threads: threads))
            #expect(run.status == 65)
            #expect(rows(path) == rows(expected), "--threads \(threads): not the records before the failed one")
            return Failure(message: run.stderr, tables: rows(path))
        }
        #expect(first?.message.contains("record \(bad): ") == true, "\(first?.message ?? "")")
    }

    /// A run with threads killed at random moments, resumed with another
    /// number of threads, ends in the store of one uninterrupted thread.
    @Test func killedRunResumedWithOtherThreadsGivesTheSameStore() throws {
        let events = input("resume.jsonl", count: 16_000)
        let extra = ["--batch-rows", "300", "--sort-mib", "1"]
        let reference = store("resume-reference.sqlite")
        let duration = try timed(arguments(reference, events, threads: 1, extra))
        let expected = dump(reference).filter { $0.key != "_sluice_checkpoints" }
        try killedRunsResumed(
            "resume", duration: duration, killed: { arguments($0, events, threads: 2, extra) },
            resumed: { arguments($0, events, threads: 3, extra + ["--resume"]) },
            check: { path, attempt in
                #expect(dump(path).filter { $0.key != "_sluice_checkpoints" } == expected, "attempt \(attempt)")
            })
    }

    /// Values over 256 KiB go to the run's one side file from every
    /// thread; each record here is an item of its own.
    @Test func largeValuesFromSeveralThreadsAreStoredWhole() throws {
        let kind = { (id: Int) in String(repeating: "v\(id)", count: 150_000) }
        let lines = (1...6).map { id in #"{"id": \#(id), "kind": "\#(kind(id))", "score": \#(id)}"# }
        let events = TestPaths.file("large.jsonl", lines.joined(separator: "\n") + "\n")
        _ = try eachGivesWhatTheFirstGives(threads: [1, 3]) { threads in
            let path = store("large-\(threads).sqlite")
            let run = try runCommand(sluice, arguments(path, events, threads: threads))
            #expect(run.status == 0, "\(run.stderr)")
            let kinds = StoreReader(path).rows("SELECT kind FROM Event ORDER BY id").map { $0.first ?? nil }
            #expect(kinds == (1...6).map(kind))
            return dump(path)
        }
    }

    /// A digest run's arguments (no `--no-skip`): record digests are kept,
    /// and a later run skips the units they know.
    func digestArguments(_ store: String, _ input: String, threads: Int, _ extra: [String] = []) -> [String] {
        ["import", "--mapping", mapping, "--into", store, "--threads", "\(threads)", "-q"] + extra + [input]
    }

    /// Stores at `paths` that share one digest secret and hold one record,
    /// their digests voided (a `--no-skip` run): the next digest run into
    /// each is a first import of every unit, and their digest tables can be
    /// compared row by row.
    func digestStores(_ paths: [String]) throws {
        try sharedSecretStores(paths, seed: "digest-seed.sqlite") {
            digestArguments($0, input("seed.jsonl", count: 1), threads: 1, $1)
        }
    }

    /// Stores at `paths` that share one digest secret, their digests
    /// voided: copies of a store named `seed` into which `arguments(seed,
    /// extra)` (an import of one record on one thread) ran twice, keeping
    /// digests and then `--no-skip`.
    func sharedSecretStores(
        _ paths: [String], seed name: String, arguments: (String, [String]) throws -> [String]
    ) throws {
        let seed = store(name)
        for extra in [[], ["--no-skip"]] {
            let run = try runCommand(sluice, try arguments(seed, extra))
            #expect(run.status == 0, "\(run.stderr)")
        }
        for path in paths {
            for suffix in ["", "-wal"] where FileManager.default.fileExists(atPath: seed + suffix) {
                try FileManager.default.copyItem(atPath: seed + suffix, toPath: path + suffix)
            }
        }
    }

    /// The next day of `day0`: every 50th record changed, every 97th gone,
    /// 150 new records (some repeating the keys of old ones), their actors'
    /// fields as `input(distinct: true)` writes them.
    func nextDay(_ day0: String, _ name: String) throws -> String {
        let lines = try String(contentsOfFile: day0, encoding: .utf8).split(separator: "\n")
        var next: [String] = []
        for (index, line) in lines.enumerated() where index % 97 != 96 {
            next.append(index % 50 == 0 ? line.replacingOccurrences(of: "\"record ", with: "\"changed ") : String(line))
        }
        for id in 0..<150 {
            let actor = #"{"id": \#(id % 400), "login": "a\#(id % 400)", "rank": \#(id % 400)}"#
            next.append(#"{"id": \#(11_950 + id), "kind": "new", "score": \#(id), "actor": \#(actor)}"#)
        }
        return TestPaths.file(name, next.joined(separator: "\n") + "\n")
    }

    /// Runs that keep record digests (the default) give with any number of
    /// threads what one thread gives, in every table (the digest tables
    /// included) and in the statistics: the first import (every unit new),
    /// the same file again (every unit skipped), the next day with
    /// `--delete-missing` (only the new and changed units parsed, each at its
    /// place among the others).
    @Test func digestRunsWithThreadsGiveTheStoreAndStatisticsOfOne() throws {
        let day0 = input("digest-day0.jsonl", distinct: true)
        let day1 = try nextDay(day0, "digest-day1.jsonl")
        let runs = [(1, 65_536), (2, 1_024), (3, 65_536)]
        let paths = runs.map { store("digest-threads-\($0.0).sqlite") }
        try digestStores(paths)
        let steps: [(input: String, extra: [String], skips: Bool)] = [
            (day0, [], false), (day0, [], true), (day1, ["--delete-missing"], true),
        ]
        try eachRunGivesWhatTheFirstGives(
            steps: steps.count, runs: runs, paths: paths, named: { "--threads \($0.0)" },
            command: { number, run, path, stats in
                let extra = steps[number].extra + ["--chunk-size", "\(run.1)", "--stats-json", stats]
                return digestArguments(path, steps[number].input, threads: run.0, extra)
            },
            first: { number, first in
                #expect(first.tables["_sluice_unit_pages"]?.isEmpty == false, "step \(number)")
                let unchanged = first.statistics["unchangedRecords"] as? Int ?? 0
                #expect(steps[number].skips ? unchanged > 9_000 : unchanged == 0, "step \(number): \(unchanged)")
            })
    }

    /// A malformed record in the middle of an item, in a digest run's first
    /// import and in a skipping run's next day: the message of one thread.
    @Test func digestRunErrorsAreReportedAsOneThreadReportsThem() throws {
        let bad = input("digest-bad.jsonl", bad: 7_001, badLine: #"{"id": 12, "kind": nope}"#)
        let day0 = input("digest-good.jsonl")
        let messages = try eachGivesWhatTheFirstGives { threads in
            let path = store("digest-bad-\(threads).sqlite")
            let first = try runCommand(sluice, digestArguments(path, bad, threads: threads))
            #expect(first.status == 65)
            let good = try runCommand(sluice, digestArguments(path, day0, threads: threads))
            #expect(good.status == 0, "\(good.stderr)")
            let next = try runCommand(sluice, digestArguments(path, bad, threads: threads))
            #expect(next.status == 65)
            return [first.stderr, next.stderr]
        }
        #expect(messages?[0].contains("record 7001: ") == true, "\(messages?[0] ?? "")")
        #expect(messages?[1].contains("record 7001: ") == true, "\(messages?[1] ?? "")")
    }

    /// A digest run with two threads killed at random moments, resumed with
    /// three, ends in the rows of one uninterrupted thread; the next day,
    /// into each, leaves the same rows again.
    @Test func killedDigestRunResumedWithOtherThreadsGivesTheSameStore() throws {
        let day0 = input("digest-resume.jsonl", count: 16_000, distinct: true)
        let day1 = try nextDay(day0, "digest-resume-next.jsonl")
        let extra = ["--batch-rows", "300", "--sort-mib", "1"]
        let rows = { (path: String) in self.dump(path).filter { !$0.key.hasPrefix("_sluice") } }
        let reference = store("digest-resume-reference.sqlite")
        let duration = try timed(digestArguments(reference, day0, threads: 1, extra))
        let expected = rows(reference)
        let next = try runCommand(sluice, digestArguments(reference, day1, threads: 1, extra + ["--delete-missing"]))
        #expect(next.status == 0, "\(next.stderr)")
        let expectedNext = rows(reference)
        try killedRunsResumed(
            "digest-resume", duration: duration, killed: { digestArguments($0, day0, threads: 2, extra) },
            resumed: { digestArguments($0, day0, threads: 3, extra + ["--resume"]) },
            check: { path, attempt in
                #expect(rows(path) == expected, "attempt \(attempt)")
                let day = try runCommand(sluice, digestArguments(path, day1, threads: 2, extra + ["--delete-missing"]))
                #expect(day.status == 0, "\(day.stderr)")
                #expect(rows(path) == expectedNext, "attempt \(attempt), next day")
            })
    }

    @Test func threadsOutOfRangeAreRefused() throws {
        let run = try runCommand(
            sluice, arguments(store("zero-threads.sqlite"), input("one.jsonl", count: 1), threads: 0))
        #expect(run.status == 64)
        #expect(run.stderr.contains("--threads must be from 1 to 1024"))
    }
}
