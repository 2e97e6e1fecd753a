import Foundation
import SluiceTestSupport
import Testing

/// Runs that skip the records whose digests the store kept
/// (docs/record-digests.md), by the binary, into SQLite stores and
/// PostgreSQL databases: each must leave the store a run that parses
/// everything (`--no-skip`) leaves, table by table.
@Suite struct RecordDigestTests {
    /// The stores the cases run into: SQLite, and PostgreSQL when a server
    /// started (a private server's database per store).
    enum Kind: CaseIterable {
        case sqlite, postgres
    }
    static let kinds = PostgresTestServer.enabled ? Kind.allCases : [.sqlite]

    static let mapping = TestPaths.file(
        "digests.yml",
        """
        entities:
          Event:
            records: $
            key: id
            attributes: {id: integer, kind: string, score: integer}
            relationships:
              actor: {entity: Actor, source: actor}
              tags: {entity: Tag, source: "tags[*]", many: true, missing: stub}
          Actor:
            key: id
            attributes: {id: integer, login: string}
          Tag:
            key: name
            attributes: {name: string}
        """)
    static let tables = ["Event", "Actor", "Tag", "Event_tags"]

    /// Event `id` as a JSON line; its actor is one of eight, whose login is
    /// `login` (the same for every event unless a test says otherwise).
    static func event(_ id: Int, score: Int? = nil, login: ((Int) -> String)? = nil) -> String {
        let actor = id % 8
        let name = login?(id) ?? "user\(actor)"
        return
            #"{"id": \#(id), "kind": "k\#(id % 3)", "score": \#(score ?? id * 2), "actor": {"id": \#(actor), "login": "\#(name)"}, "tags": ["t\#(id % 4)"]}"#
    }

    func file(_ lines: [String]) -> String {
        TestPaths.file("in-\(UUID().uuidString).jsonl", lines.joined(separator: "\n") + "\n")
    }

    func run(_ store: String, _ arguments: [String]) throws -> CommandResult {
        let result = try runCommand(
            sluice, ["import", "--mapping", Self.mapping, "--into", store, "--stats-json", stats(store)] + arguments)
        #expect(result.status == 0, "\(arguments): \(result.stderr)")
        return result
    }

    func unchangedRecords(_ store: String) throws -> Int {
        let data = try Data(contentsOf: URL(fileURLWithPath: stats(store)))
        let object = try JSONSerialization.jsonObject(with: data) as? [String: Any]
        return object?["unchangedRecords"] as? Int ?? -1
    }

    /// Where a run into `store` writes its `--stats-json`.
    func stats(_ store: String) -> String {
        guard store.hasPrefix("host=") else { return store + ".json" }
        let name = store.split(separator: " ").first { $0.hasPrefix("dbname=") }?.dropFirst(7) ?? ""
        return Self.statsDirectory.appendingPathComponent("\(name).json").path
    }
    static let statsDirectory = TestPaths.temporaryDirectory()

    /// The rows each entity lost in the last run (`--stats-json`).
    func deleted(_ store: String) throws -> [String: Int] {
        let data = try Data(contentsOf: URL(fileURLWithPath: stats(store)))
        let entities = (try JSONSerialization.jsonObject(with: data) as? [String: Any])?["entities"] as? [String: Any]
        return (entities ?? [:]).compactMapValues { ($0 as? [String: Any])?["deleted"] as? Int }
    }

    func rows(_ store: String) -> [[[String?]]] {
        // Tag has one column.
        let sql = Self.tables.map { "SELECT * FROM \"\($0)\" ORDER BY 1\($0 == "Tag" ? "" : ", 2")" }
        guard store.hasPrefix("host=") else {
            let reader = StoreReader(store)
            return sql.map { reader.rows($0) }
        }
        let reader = PostgresReader(store)
        return sql.map { reader.rows($0) }
    }

    /// A new store of `kind`: a SQLite file, or a database of the tests' server.
    func store(_ kind: Kind) throws -> String {
        switch kind {
        case .sqlite: return TestPaths.temporaryDirectory().appendingPathComponent("s.sqlite").path
        case .postgres: return try PostgresTestServer.require().newDatabase()
        }
    }

    /// Applies each step to a store that skips and to one that parses
    /// everything (`--no-skip`), and requires the same rows after each;
    /// returns the unchanged records each skipping step reported.
    /// The deletions each step reported must be the same on both sides.
    func differential(_ kind: Kind, _ steps: [[String]]) throws -> [Int] {
        let (skipping, parsing) = (try store(kind), try store(kind))
        var unchanged: [Int] = []
        for (index, step) in steps.enumerated() {
            _ = try run(skipping, step)
            unchanged.append(try unchangedRecords(skipping))
            _ = try run(parsing, ["--no-skip"] + step)
            #expect(try unchangedRecords(parsing) == 0)
            #expect(rows(skipping) == rows(parsing), "after step \(index + 1): \(step)")
            #expect(try deleted(skipping) == deleted(parsing), "after step \(index + 1): \(step)")
        }
        return unchanged
    }

    /// Day 0, and day 1 without 30 of its events (and without the one that
    /// named actor 99), 38 changed and 20 new; `extra` after day 1.
    func days(_ extra: [Int] = []) -> (day0: String, day1: String) {
        let lonely = #"{"id": 999, "kind": "k0", "score": 1, "actor": {"id": 99, "login": "gone"}, "tags": ["t0"]}"#
        let day0 = file((1...300).map { Self.event($0) } + [lonely])
        var day1 = (1...300).filter { $0 % 10 != 0 }.map { Self.event($0, score: $0 % 7 == 0 ? -$0 : nil) }
        day1 += (301...320).map { Self.event($0) } + extra.map { Self.event($0) }
        return (day0, file(day1.reversed()))
    }

    /// The next day with `--delete-missing` skips its unchanged records:
    /// the rows of vanished records (events, and an actor only they named)
    /// are deleted, those of skipped records kept, with the deletions a full
    /// run reports; before, such a run parsed every record.
    @Test(arguments: kinds) func aNextDayWithDeleteMissingSkipsItsUnchangedRecords(kind: Kind) throws {
        let (day0, day1) = days()
        let sweep = ["--delete-missing"]
        let unchanged = try differential(kind, [[day0], sweep + [day1], sweep + [day1], sweep + [day0]])
        #expect(unchanged == [0, 300 - 30 - 38, 290, 300 - 30 - 38])
        let target = try store(kind)
        _ = try run(target, [day0])
        _ = try run(target, sweep + [day1])
        #expect(try deleted(target) == ["Event": 31, "Actor": 1, "Tag": 0])
        let tables = rows(target)
        #expect(tables[0].count == 290 && tables[3].count == 290)
        #expect(!tables[1].contains { $0.first == "99" }, "\(tables[1])")
    }

    /// A sweep that deletes stubs (`--allow-empty-delete` empties Tag, whose
    /// rows only stubs make) voids the digests, since a full run of the
    /// records that name them would stub them again: the next run parses
    /// everything and gives the store a full run gives; a sweep that leaves
    /// the stubs alone keeps them.
    @Test(arguments: kinds) func aSweepThatDeletesStubsVoidsTheDigests(kind: Kind) throws {
        let (day0, day1) = days()
        let steps = [
            [day0], ["--delete-missing", day1], ["--delete-missing", "--allow-empty-delete", day1], [day1], [day1],
        ]
        let unchanged = try differential(kind, steps)
        #expect(unchanged == [0, 232, 290, 0, 290])
        let target = try store(kind)
        _ = try run(target, [day0])
        let swept = try run(target, ["--delete-missing", "--allow-empty-delete", day1])
        #expect(swept.stderr.contains("record digests voided (delete-missing deleted rows of Tag"), "\(swept.stderr)")
        #expect(try deleted(target)["Tag"] == 4 && rows(target)[2].isEmpty, "\(rows(target)[2])")
    }

    /// The same file again parses nothing and writes nothing; another day's
    /// file parses only its new and changed records.
    @Test(arguments: kinds) func aSecondRunParsesOnlyWhatChanged(kind: Kind) throws {
        let day0 = file((1...300).map { Self.event($0) })
        var day1Lines = (1...300).filter { $0 % 10 != 0 }.map { Self.event($0, score: $0 % 7 == 0 ? -$0 : nil) }
        day1Lines += (301...320).map { Self.event($0) }
        let day1 = file(day1Lines.reversed())
        let unchanged = try differential(kind, [[day0], [day0], [day1], [day1]])
        // Day 1 drops 30 records, changes 38 of those it keeps (multiples
        // of 7 but not of 10) and adds 20.
        #expect(unchanged == [0, 300, 300 - 30 - 38, 290])
    }

    /// An event whose key is in two records (the dump repeats it): once with
    /// the same row in other bytes, once with other content. Such a key's
    /// contributions are the units' digests (an own table, docs/record-digests.md),
    /// so the two units disagree unless their bytes are equal, and a run that
    /// changes one of them parses the other too: every step leaves the store
    /// a full run leaves.
    @Test(arguments: kinds) func repeatedRecordKeys(kind: Kind) throws {
        var lines = (1...60).map { Self.event($0) }
        // Event 7 again in other spacing (the same row), event 9 again with another score.
        lines.append(Self.event(7).replacingOccurrences(of: ", ", with: ","))
        lines.append(Self.event(9, score: 5))
        let changed = lines.map { $0 == Self.event(7) ? Self.event(7, score: -7) : $0 }
        let respaced = lines.map { $0 == Self.event(9) ? Self.event(9).replacingOccurrences(of: ": ", with: ":") : $0 }
        let unchanged = try differential(
            kind,
            [[file(lines)], [file(lines.reversed())], [file(changed)], [file(respaced)], [file(lines)]])
        // The two units of event 9 disagree: pinned by the first import,
        // parsed by every run after it. Changing one unit of event 7 parses the
        // other as well (their digests differ), and pins both from then on.
        #expect(unchanged == [0, 60, 58, 58, 58])
    }

    /// A record that comes twice with the same fields but other tags (then
    /// `[]`, which clears them): its rows agree, its link lists do not, so
    /// the run that parsed both pins them, and the run that finds them
    /// swapped parses both and leaves the last one's tags, as a full run does.
    @Test(arguments: kinds) func aRecordRepeatedWithOtherLinksIsParsedWhenItsOccurrencesSwap(kind: Kind) throws {
        let tagged = #"{"id": 1, "kind": "k1", "score": 2, "actor": {"id": 1, "login": "user1"}, "tags": ["x", "y"]}"#
        let untagged = #"{"id": 1, "kind": "k1", "score": 2, "actor": {"id": 1, "login": "user1"}, "tags": []}"#
        let others = (2...5).map { Self.event($0) }
        let unchanged = try differential(
            kind, [[file([tagged] + others + [untagged])], [file([untagged] + others + [tagged])]])
        #expect(unchanged == [0, 4])
    }

    /// A set kept under an older digest version (version 2 kept a hash of
    /// every row's cells beside its key) is voided, not read: the next run
    /// parses every record and leaves the store a full run leaves, and the
    /// run after it skips again.
    @Test func aSetOfAnOlderDigestVersionIsVoided() throws {
        let (skipping, parsing) = (try store(.sqlite), try store(.sqlite))
        let day0 = file((1...50).map { Self.event($0) })
        let day1 = file((1...50).map { Self.event($0, score: $0 == 20 ? -1 : nil) })
        _ = try run(skipping, [day0])
        _ = try run(parsing, ["--no-skip", day0])
        let reader = StoreReader(skipping, writable: true)
        _ = reader.rows("UPDATE _sluice_digest_state SET fingerprint = '2' || substr(fingerprint, 2)")
        #expect(reader.rows("SELECT substr(fingerprint, 1, 2), valid FROM _sluice_digest_state") == [["2 ", "1"]])
        _ = try run(skipping, [day1])
        #expect(try unchangedRecords(skipping) == 0)
        _ = try run(parsing, ["--no-skip", day1])
        #expect(rows(skipping) == rows(parsing))
        _ = try run(skipping, [day1])
        #expect(try unchangedRecords(skipping) == 50)
    }

    /// A shared object whose content differs between the records that name
    /// it: the order of those records decides its row, so a reordered file
    /// must give the row a full run gives, and a record that changes what it
    /// says of a shared object brings in the others that name it.
    @Test(arguments: kinds) func sharedObjectsWithDifferingContent(kind: Kind) throws {
        let lines = (1...80).map { Self.event($0, login: { $0 % 8 == 1 ? "u\($0)" : "same\($0 % 8)" }) }
        let reordered = file(lines.reversed())
        let renamed = file(lines.map { $0.replacingOccurrences(of: "same2", with: "renamed2") }.reversed())
        let partly = file(
            lines.enumerated().map {
                $0.offset == 40 ? $0.element.replacingOccurrences(of: "same3", with: "x3") : $0.element
            })
        _ = try differential(kind, [[file(lines)], [reordered], [renamed], [partly], [reordered]])
    }

    /// Another writer of the store (a run under another mapping, a run in
    /// input order) voids the digests: the earlier dump again is parsed
    /// whole, and the store is the one a full run gives.
    @Test(arguments: kinds) func anotherWriterVoidsTheDigests(kind: Kind) throws {
        let day0 = file((1...100).map { Self.event($0) })
        let change = file([Self.event(5, score: 999), Self.event(6, score: 998)])
        let (skipping, parsing) = (try store(kind), try store(kind))
        for (target, extra) in [(skipping, [String]()), (parsing, ["--no-skip"])] {
            _ = try run(target, extra + [day0])
            _ = try run(target, extra + ["--order", "input", change])
        }
        let again = try run(skipping, [day0])
        #expect(again.stderr.isEmpty, "\(again.stderr)")
        #expect(try unchangedRecords(skipping) == 0)
        _ = try run(parsing, ["--no-skip", day0])
        #expect(rows(skipping) == rows(parsing))
        _ = try run(skipping, [day0])
        #expect(try unchangedRecords(skipping) == 100)
    }

    /// Zero-config runs (`--entity --key`, columns typed by the first value
    /// or by the stored table) skip too, and a next day that brings a new
    /// member (a new column) leaves the table a full run leaves.
    @Test(arguments: kinds) func zeroConfigRunsSkipAsFullRunsWrite(kind: Kind) throws {
        let day0 = file((1...200).map { #"{"id": \#($0), "kind": "k\#($0 % 3)", "score": \#($0 * 2)}"# })
        var next = (1...200).filter { $0 % 9 != 0 }.map {
            #"{"id": \#($0), "kind": "k\#($0 % 3)", "score": \#($0 % 5 == 0 ? -$0 : $0 * 2)}"#
        }
        next += (201...210).map { #"{"id": \#($0), "kind": "new", "score": 1, "extra": "e\#($0)"}"# }
        let day1 = file(next.reversed())
        let (skipping, parsing) = (try store(kind), try store(kind))
        var unchanged: [Int] = []
        for step in [day0, day0, day1, day1] {
            for (target, extra) in [(skipping, [String]()), (parsing, ["--no-skip"])] {
                let result = try runCommand(
                    sluice,
                    ["import", "--entity", "Event", "--key", "id", "--into", target, "--stats-json", stats(target)]
                        + extra + [step])
                #expect(result.status == 0, "\(result.stderr)")
            }
            unchanged.append(try unchangedRecords(skipping))
            let sql = "SELECT * FROM \"Event\" ORDER BY 1"
            if kind == .sqlite {
                #expect(StoreReader(skipping).rows(sql) == StoreReader(parsing).rows(sql))
            } else {
                #expect(PostgresReader(skipping).rows(sql) == PostgresReader(parsing).rows(sql))
            }
        }
        // Day 1 keeps 178 of day 0's records, changes 36 of them (multiples
        // of 5 but not of 9) and adds 10.
        #expect(unchanged == [0, 200, 178 - 36, 188])
    }

    /// The zero-config form of a nightly sweep (`--entity --key
    /// --delete-missing`): each step, the skipping store equals the
    /// `--no-skip` store and deletes as many rows; day 1 drops 22 records,
    /// and once the set covers Event the sweep goes in proportion to the
    /// change (day 1 again skips every record and deletes nothing).
    @Test(arguments: kinds) func zeroConfigSweepsSkipAsFullRunsSweep(kind: Kind) throws {
        let day0 = file((1...200).map { #"{"id": \#($0), "kind": "k\#($0 % 3)", "score": \#($0 * 2)}"# })
        var next = (1...200).filter { $0 % 9 != 0 }.map {
            #"{"id": \#($0), "kind": "k\#($0 % 3)", "score": \#($0 % 5 == 0 ? -$0 : $0 * 2)}"#
        }
        next += (201...210).map { #"{"id": \#($0), "kind": "new", "score": 1, "extra": "e\#($0)"}"# }
        let day1 = file(next.reversed())
        let (skipping, parsing) = (try store(kind), try store(kind))
        var (unchanged, deletions): ([Int], [Int]) = ([], [])
        for step in [day0, day0, day1, day1] {
            for (target, extra) in [(skipping, [String]()), (parsing, ["--no-skip"])] {
                let result = try runCommand(
                    sluice,
                    ["import", "--entity", "Event", "--key", "id", "--delete-missing", "--into", target]
                        + ["--stats-json", stats(target)] + extra + [step])
                #expect(result.status == 0, "\(result.stderr)")
            }
            unchanged.append(try unchangedRecords(skipping))
            deletions.append(try deleted(skipping)["Event"] ?? 0)
            #expect(try deleted(skipping) == (try deleted(parsing)))
            let sql = "SELECT * FROM \"Event\" ORDER BY 1"
            if kind == .sqlite {
                #expect(StoreReader(skipping).rows(sql) == StoreReader(parsing).rows(sql))
            } else {
                #expect(PostgresReader(skipping).rows(sql) == PostgresReader(parsing).rows(sql))
            }
        }
        #expect(unchanged == [0, 200, 178 - 36, 188])
        #expect(deletions == [0, 0, 22, 0])
    }

    /// `sluice status` shows the digest set: none before a run keeps one,
    /// then its records and bytes, and void once another writer wrote.
    @Test(arguments: kinds) func statusShowsTheDigestSet(kind: Kind) throws {
        let target = try store(kind)
        let events = file((1...50).map { Self.event($0) })
        _ = try run(target, ["--no-skip", events])
        #expect(try runCommand(sluice, ["status", target]).stdout.contains("record digests") == false)
        _ = try run(target, [events])
        let text = try runCommand(sluice, ["status", target]).stdout
        #expect(text.contains("record digests:\n  50 records, "), "\(text)")
        #expect(text.contains("the next run with the same mapping and options skips"), "\(text)")
        let json = try runCommand(sluice, ["status", "--json", target]).stdout
        let object = try JSONSerialization.jsonObject(with: Data(json.utf8)) as? [String: Any]
        let digests = try #require(object?["digests"] as? [String: Any], "\(json)")
        #expect(digests["units"] as? Int == 50 && digests["valid"] as? Bool == true, "\(json)")
        // 16 bytes of digest and at least a key per record.
        #expect((digests["bytes"] as? Int ?? 0) > 50 * 20, "\(json)")
        _ = try run(target, ["--order", "input", events])
        let voided = try runCommand(sluice, ["status", target]).stdout
        #expect(voided.contains("void, the next run parses every record"), "\(voided)")
    }

    /// A run that writes without keeping digests says, once, that the next
    /// run parses everything; a store that had none gets no such warning.
    @Test(arguments: kinds) func aRunInInputOrderSaysItVoidedTheDigests(kind: Kind) throws {
        let target = try store(kind)
        let events = file((1...10).map { Self.event($0) })
        let first = try run(target, ["--order", "input", events])
        #expect(!first.stderr.contains("record digests"), "\(first.stderr)")
        _ = try run(target, [events])
        let voiding = try run(target, ["--order", "input", events])
        #expect(voiding.stderr.contains("record digests voided (--order input)"), "\(voiding.stderr)")
    }

    /// A changed record that does not parse is reported where it is in its
    /// file (line, column, record number), as a full run reports it; the
    /// records before it that changed are not committed (key order).
    @Test(arguments: kinds) func aBrokenChangedRecordIsReportedWhereItIs(kind: Kind) throws {
        let target = try store(kind)
        var lines = (1...50).map { Self.event($0) }
        _ = try run(target, [file(lines)])
        lines[36] = #"{"id": 37, "kind": "k1", "score": }"#
        let broken = file(lines)
        let result = try runCommand(sluice, ["import", "--mapping", Self.mapping, "--into", target, broken])
        #expect(result.status != 0)
        #expect(result.stderr.contains("\(broken):37:"), "\(result.stderr)")
        #expect(result.stderr.contains("record 37"), "\(result.stderr)")
    }
}
