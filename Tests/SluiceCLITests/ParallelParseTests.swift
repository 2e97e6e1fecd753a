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
    /// replaced by `badLine`.
    func input(_ name: String, count: Int = 12_000, bad: Int? = nil, badLine: String = "") -> String {
        var lines: [String] = []
        var state: UInt64 = 7
        for index in 1...count {
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            let id = Int(state >> 33) % 9_000
            let actor = Int(state >> 20) % 400
            // Each field of an actor is present in some of its records only.
            var fields = [#""id": \#(actor)"#]
            if index % 3 == 0 { fields.append(#""login": "a\#(actor)-\#(index)""#) }
            if index % 5 == 0 { fields.append(#""rank": \#(index)"#) }
            if index % 7 == 0 { fields.append(#""note": "seen at \#(index)""#) }
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
        var reference: (tables: [String: [String]], statistics: NSDictionary)?
        // 1 KiB chunks: records are split across chunks, and each 256 KiB item ends inside one.
        for (threads, chunk) in [(1, 65_536), (2, 1_024), (3, 65_536), (5, 1_024)] {
            let path = store("threads-\(threads).sqlite")
            let stats = path + ".json"
            let run = try runCommand(
                sluice, arguments(path, events, threads: threads, ["--chunk-size", "\(chunk)", "--stats-json", stats]))
            #expect(run.status == 0, "\(run.stderr)")
            let result = (dump(path), try statistics(stats))
            guard let reference else {
                reference = result
                #expect(result.0["Event"]?.count ?? 0 > 6_000)
                #expect(result.0["Actor"]?.count == 400)
                // The actors' rows merge records from every part of the input.
                #expect(StoreReader(path).count("Actor") == 400)
                #expect(result.0["_sluice_checkpoints"]?.count == 1)
                continue
            }
            #expect(result.0 == reference.tables, "--threads \(threads)")
            #expect(result.1 == reference.statistics, "--threads \(threads)")
        }
    }

    /// An error in the middle of an item, and one at the input's end: the
    /// same message (file, line:column, byte, record number) and exit status.
    @Test(arguments: [
        ("malformed", 7_001, #"{"id": 12, "kind": nope}"#), ("truncated", 12_000, #"{"id": 3, "kind": "#),
    ])
    func errorsAreReportedAsOneThreadReportsThem(name: String, bad: Int, line: String) throws {
        let events = input("\(name).jsonl", bad: bad, badLine: line)
        var outputs: [String] = []
        for threads in [1, 2, 4] {
            let run = try runCommand(sluice, arguments(store("\(name)-\(threads).sqlite"), events, threads: threads))
            #expect(run.status == 65)
            outputs.append(run.stderr)
        }
        #expect(outputs[0].contains("record \(bad): "), "\(outputs[0])")
        #expect(outputs[1] == outputs[0])
        #expect(outputs[2] == outputs[0])
    }

    /// A run with threads killed at random moments, resumed with another
    /// number of threads, ends in the store of one uninterrupted thread.
    @Test func killedRunResumedWithOtherThreadsGivesTheSameStore() throws {
        let events = input("resume.jsonl", count: 16_000)
        let extra = ["--batch-rows", "300", "--sort-mib", "1"]
        let reference = store("resume-reference.sqlite")
        let started = Date()
        let clean = try runCommand(sluice, arguments(reference, events, threads: 1, extra))
        #expect(clean.status == 0, "\(clean.stderr)")
        let duration = UInt32(Date().timeIntervalSince(started) * 1_000_000)
        let expected = dump(reference).filter { $0.key != "_sluice_checkpoints" }
        var interrupted = 0
        for attempt in 0..<3 {
            let path = store("resume-\(attempt).sqlite")
            let process = Process()
            process.executableURL = URL(fileURLWithPath: sluice)
            process.arguments = arguments(path, events, threads: 2, extra)
            process.standardOutput = FileHandle.nullDevice
            process.standardError = FileHandle.nullDevice
            try process.run()
            usleep(duration / 5 + UInt32(attempt) * duration / 4)
            if process.isRunning {
                kill(process.processIdentifier, SIGKILL)
                interrupted += 1
            }
            process.waitUntilExit()
            let resumed = try runCommand(sluice, arguments(path, events, threads: 3, extra + ["--resume"]))
            #expect(resumed.status == 0, "\(resumed.stderr)")
            #expect(dump(path).filter { $0.key != "_sluice_checkpoints" } == expected, "attempt \(attempt)")
        }
        #expect(interrupted > 0)
    }

    /// Zero-config imports infer column types as records come, on one
    /// thread whatever `--threads` says: the same store and statistics.
    @Test func zeroConfigImportsAreTheSameWithThreads() throws {
        let events = input("zero.jsonl", count: 3_000)
        var results: [([String: [String]], NSDictionary)] = []
        for threads in [1, 4] {
            let path = store("zero-\(threads).sqlite")
            let run = try runCommand(
                sluice,
                [
                    "import", "--entity", "Event", "--key", "id", "--into", path, "--no-skip", "--threads",
                    "\(threads)",
                    "-q", "--stats-json", path + ".json", events,
                ])
            #expect(run.status == 0, "\(run.stderr)")
            results.append((dump(path), try statistics(path + ".json")))
        }
        #expect(results[0].0["Event"]?.count ?? 0 > 2_000)
        #expect(results[1].0 == results[0].0)
        #expect(results[1].1 == results[0].1)
    }

    /// Values over 256 KiB go to the run's one side file from every
    /// thread; each record here is an item of its own.
    @Test func largeValuesFromSeveralThreadsAreStoredWhole() throws {
        let kind = { (id: Int) in String(repeating: "v\(id)", count: 150_000) }
        let lines = (1...6).map { id in #"{"id": \#(id), "kind": "\#(kind(id))", "score": \#(id)}"# }
        let events = TestPaths.file("large.jsonl", lines.joined(separator: "\n") + "\n")
        var dumps: [[String: [String]]] = []
        for threads in [1, 3] {
            let path = store("large-\(threads).sqlite")
            let run = try runCommand(sluice, arguments(path, events, threads: threads))
            #expect(run.status == 0, "\(run.stderr)")
            let kinds = StoreReader(path).rows("SELECT kind FROM Event ORDER BY id").map { $0.first ?? nil }
            #expect(kinds == (1...6).map(kind))
            dumps.append(dump(path))
        }
        #expect(dumps[1] == dumps[0])
    }

    @Test func threadsOutOfRangeAreRefused() throws {
        let run = try runCommand(
            sluice, arguments(store("zero-threads.sqlite"), input("one.jsonl", count: 1), threads: 0))
        #expect(run.status == 64)
        #expect(run.stderr.contains("--threads must be from 1 to 1024"))
    }
}
