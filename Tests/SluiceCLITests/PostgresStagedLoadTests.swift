import Foundation
import SluiceTestSupport
import Testing

/// The staged first load into PostgreSQL (rows copied as they are read,
/// merged by the server once the input is read): the same rows and
/// statistics as the sorted apply in batches, and a kill while staging or
/// while merging ends, resumed or run again, where an uninterrupted run
/// ends.
@Suite(
    .serialized,
    .enabled(if: PostgresTestServer.enabled, "no PostgreSQL server could be started (the reason is on standard error)"))
struct PostgresStagedLoadTests {
    /// Events whose keys repeat, each time with other fields (a note only
    /// in some, a score that changes), their actor nested (logins that
    /// change for some actors, a URL only in some records) and their tags
    /// (a list, an empty one, none).
    static let mapping = TestPaths.file(
        "staged.yml",
        """
        entities:
          Event:
            records: $
            key: id
            attributes: {id: integer, kind: string, score: integer, note: string, at: date}
            relationships:
              actor: {entity: Actor, source: actor}
              tags: {entity: Tag, source: "tags[*]", many: true, missing: stub}
          Actor:
            key: id
            attributes: {id: integer, login: string, url: string}
          Tag:
            key: name
            attributes: {name: string}
        """)

    static func events(_ count: Int, name: String) -> String {
        let lines = (0..<count).map { record -> String in
            let id = (record * 7_919) % (count * 2 / 3)
            var fields = [#""id": \#(id)"#, #""score": \#(record)"#]
            if record % 3 == 0 { fields.append(#""note": "n\#(record)""#) }
            if record % 4 != 1 { fields.append(#""kind": "k\#(id % 5)""#) }
            fields.append(#""at": "2026-11-\#(10 + id % 9)T0\#(id % 10):00:00Z""#)
            let actor = id % 97
            let login = actor % 5 == 0 ? "l\(actor)-\(record % 3)" : "l\(actor)"
            let url = record % 2 == 0 ? #", "url": "u\#(actor)""# : ""
            fields.append(#""actor": {"id": \#(actor), "login": "\#(login)"\#(url)}"#)
            switch record % 5 {
            case 0: break
            case 1: fields.append(#""tags": []"#)
            default: fields.append(#""tags": ["t\#(id % 11)", "t\#(record % 13)", "t\#(id % 11)"]"#)
            }
            return "{" + fields.joined(separator: ", ") + "}"
        }
        return TestPaths.file(name, lines.joined(separator: "\n") + "\n")
    }

    let input = Self.events(24_000, name: "staged.jsonl")

    func dump(_ database: String) -> [[[String?]]] {
        let reader = PostgresReader(database)
        return ["Event", "Actor", "Tag", "Event_tags"].map {
            reader.rows("SELECT * FROM \"\($0)\" ORDER BY 1, 2 NULLS FIRST, 3 NULLS FIRST")
        }
    }

    /// The statistics of a run, less its timings.
    func statistics(_ path: String) throws -> NSDictionary {
        let data = try Data(contentsOf: URL(fileURLWithPath: path))
        guard let object = try JSONSerialization.jsonObject(with: data) as? [String: Any] else { return [:] }
        return NSDictionary(dictionary: object.filter { !$0.key.lowercased().contains("second") })
    }

    /// The last statement of each other session on `database`.
    func sessions(_ server: PostgresTestServer, _ database: String) -> [String] {
        let name = database.split(separator: " ").first { $0.hasPrefix("dbname=") }?.dropFirst(7) ?? ""
        return PostgresReader(server.conninfo()).rows(
            "SELECT coalesce(query, '') FROM pg_stat_activity WHERE datname = '\(name)' AND pid <> pg_backend_pid()"
        ).map { $0[0] ?? "" }
    }

    func waitForIdle(_ server: PostgresTestServer, _ database: String) {
        let deadline = Date().addingTimeInterval(30)
        while !sessions(server, database).isEmpty && Date() < deadline { usleep(10_000) }
    }

    /// A database whose tables exist and hold one event outside the input's
    /// keys: no longer a first load, so the run sorts and applies batches.
    func seeded(_ server: PostgresTestServer) throws -> String {
        let database = try server.newDatabase()
        let seed = TestPaths.file("seed.jsonl", #"{"id": -1, "kind": "seed"}"# + "\n")
        let made = try runCommand(sluice, ["import", "--mapping", Self.mapping, "--into", database, seed])
        #expect(made.status == 0, "\(made.stderr)")
        return database
    }

    /// The staged first load against the sorted apply in batches of the same
    /// input (into tables that hold one unrelated row): the same rows in
    /// every table and the same statistics; then the same file again into
    /// both gives the same rows.
    @Test func aStagedFirstLoadGivesTheRowsAndStatisticsOfTheBatchedApply() throws {
        let server = try PostgresTestServer.require()
        let directory = TestPaths.temporaryDirectory()
        let staged = try server.newDatabase()
        let batched = try seeded(server)
        var results: [NSDictionary] = []
        for (index, database) in [staged, batched].enumerated() {
            let stats = directory.appendingPathComponent("stats\(index).json").path
            let sighting = Sighting()
            let watcher = Thread { [self] in
                while !sighting.finished {
                    if sessions(server, database).contains(where: { $0.hasPrefix("COPY \"_sluice_load_") }) {
                        sighting.saw()
                    }
                    usleep(2_000)
                }
            }
            watcher.start()
            let run = try runCommand(
                sluice,
                [
                    "import", "--mapping", Self.mapping, "--into", database, "--batch-rows", "1000", "--stats-json",
                    stats, input,
                ])
            #expect(run.status == 0, "\(run.stderr)")
            sighting.finish()
            results.append(try statistics(stats))
            #expect(
                sighting.seen == (index == 0), "\(index == 0 ? "the first load staged no rows" : "the run staged rows")"
            )
        }
        _ = try server.execute("DELETE FROM \"Event\" WHERE id = -1", in: batched)
        #expect(dump(staged) == dump(batched))
        #expect(dump(staged)[0].count == 16_000)
        #expect(results[0] == results[1], "\(results[0])\n\(results[1])")
        for database in [staged, batched] {
            let again = try runCommand(sluice, ["import", "--mapping", Self.mapping, "--into", database, input])
            #expect(again.status == 0, "\(again.stderr)")
        }
        #expect(dump(staged) == dump(batched))
    }

    /// Killed while staging rows and while merging them, then resumed or run
    /// again: each ends in the database an uninterrupted first load gives.
    @Test(arguments: [true, false]) func killedWhileStagingOrMergingEndsWhereAnUninterruptedLoadEnds(resume: Bool)
        throws
    {
        let server = try PostgresTestServer.require()
        let reference = try server.newDatabase()
        let load = ["import", "--mapping", Self.mapping, "--batch-rows", "1000", input]
        let clean = try runCommand(sluice, load + ["--into", reference])
        #expect(clean.status == 0, "\(clean.stderr)")
        let expected = dump(reference)
        let phases: [(name: String, reached: (String) -> Bool)] = [
            ("staging", { $0.hasPrefix("COPY \"_sluice_load_") }),
            ("merging", { $0.hasPrefix("INSERT INTO \"_sluice_stage_") || $0.hasPrefix("WITH w AS (INSERT") }),
            ("linking", { $0.hasPrefix("INSERT INTO \"_sluice_links_") || $0.hasPrefix("WITH cand AS") }),
        ]
        for phase in phases {
            let database = try server.newDatabase()
            let killed = try SyncCrashTests.killed(
                load + ["--into", database], when: { sessions(server, database).contains(where: phase.reached) })
            #expect(killed, "never reached \(phase.name)")
            waitForIdle(server, database)
            let again = try runCommand(sluice, load + ["--into", database] + (resume ? ["--resume"] : []))
            #expect(again.status == 0, "\(phase.name): \(again.stderr)")
            #expect(dump(database) == expected, "killed while \(phase.name): the database differs")
            let temporary = PostgresReader(database).value(
                "SELECT count(*) FROM pg_class WHERE relname LIKE '\\_sluice\\_load\\_%'")
            #expect(temporary == "0", "\(phase.name): staging tables left")
        }
    }
}

/// Whether a watching thread saw a statement, and whether it should stop.
private final class Sighting: @unchecked Sendable {
    private let lock = NSLock()
    private var sawIt = false
    private var done = false

    var seen: Bool { lock.withLock { sawIt } }
    var finished: Bool { lock.withLock { done } }
    func saw() { lock.withLock { sawIt = true } }
    /// Stops the watcher and waits for its last poll.
    func finish() {
        lock.withLock { done = true }
        usleep(50_000)
    }
}
