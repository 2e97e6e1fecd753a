import Foundation
import SluiceTestSupport
import Testing

/// Runs that skip the records whose digests the store kept
/// (docs/record-digests.md), by the binary: each must leave the store a run
/// that parses everything (`--no-skip`) leaves, table by table.
@Suite struct RecordDigestTests {
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
            sluice, ["import", "--mapping", Self.mapping, "--into", store, "--stats-json", store + ".json"] + arguments)
        #expect(result.status == 0, "\(arguments): \(result.stderr)")
        return result
    }

    func unchangedRecords(_ store: String) throws -> Int {
        let data = try Data(contentsOf: URL(fileURLWithPath: store + ".json"))
        let object = try JSONSerialization.jsonObject(with: data) as? [String: Any]
        return object?["unchangedRecords"] as? Int ?? -1
    }

    /// The rows each entity lost in the last run (`--stats-json`).
    func deleted(_ store: String) throws -> [String: Int] {
        let data = try Data(contentsOf: URL(fileURLWithPath: store + ".json"))
        let entities = (try JSONSerialization.jsonObject(with: data) as? [String: Any])?["entities"] as? [String: Any]
        return (entities ?? [:]).compactMapValues { ($0 as? [String: Any])?["deleted"] as? Int }
    }

    func rows(_ store: String) -> [[[String?]]] {
        let reader = StoreReader(store)
        return Self.tables.map { reader.rows("SELECT * FROM \"\($0)\" ORDER BY 1, 2") }
    }

    func store() -> String { TestPaths.temporaryDirectory().appendingPathComponent("s.sqlite").path }

    /// Applies each step to a store that skips and to one that parses
    /// everything (`--no-skip`), and requires the same rows after each;
    /// returns the unchanged records each skipping step reported.
    /// The deletions each step reported must be the same on both sides.
    func differential(_ steps: [[String]]) throws -> [Int] {
        let (skipping, parsing) = (store(), store())
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
    @Test func aNextDayWithDeleteMissingSkipsItsUnchangedRecords() throws {
        let (day0, day1) = days()
        let sweep = ["--delete-missing"]
        let unchanged = try differential([[day0], sweep + [day1], sweep + [day1], sweep + [day0]])
        #expect(unchanged == [0, 300 - 30 - 38, 290, 300 - 30 - 38])
        let target = store()
        _ = try run(target, [day0])
        _ = try run(target, sweep + [day1])
        #expect(try deleted(target) == ["Event": 31, "Actor": 1, "Tag": 0])
        #expect(StoreReader(target).count("Event") == 290)
        #expect(StoreReader(target).value("SELECT count(*) FROM Actor WHERE id = 99") == "0")
        #expect(StoreReader(target).count("Event_tags") == 290)
    }

    /// A sweep that deletes stubs (`--allow-empty-delete` empties Tag, whose
    /// rows only stubs make) voids the digests, since a full run of the
    /// records that name them would stub them again: the next run parses
    /// everything and gives the store a full run gives; a sweep that leaves
    /// the stubs alone keeps them.
    @Test func aSweepThatDeletesStubsVoidsTheDigests() throws {
        let (day0, day1) = days()
        let steps = [
            [day0], ["--delete-missing", day1], ["--delete-missing", "--allow-empty-delete", day1], [day1], [day1],
        ]
        let unchanged = try differential(steps)
        #expect(unchanged == [0, 232, 290, 0, 290])
        let target = store()
        _ = try run(target, [day0])
        let swept = try run(target, ["--delete-missing", "--allow-empty-delete", day1])
        #expect(swept.stderr.contains("record digests voided (delete-missing deleted rows of Tag"), "\(swept.stderr)")
        #expect(StoreReader(target).count("Tag") == 0)
    }

    /// The same file again parses nothing and writes nothing; another day's
    /// file parses only its new and changed records.
    @Test func aSecondRunParsesOnlyWhatChanged() throws {
        let day0 = file((1...300).map { Self.event($0) })
        var day1Lines = (1...300).filter { $0 % 10 != 0 }.map { Self.event($0, score: $0 % 7 == 0 ? -$0 : nil) }
        day1Lines += (301...320).map { Self.event($0) }
        let day1 = file(day1Lines.reversed())
        let unchanged = try differential([[day0], [day0], [day1], [day1]])
        // Day 1 drops 30 records, changes 38 of those it keeps (multiples
        // of 7 but not of 10) and adds 20.
        #expect(unchanged == [0, 300, 300 - 30 - 38, 290])
    }

    /// A shared object whose content differs between the records that name
    /// it: the order of those records decides its row, so a reordered file
    /// must give the row a full run gives, and a record that changes what it
    /// says of a shared object brings in the others that name it.
    @Test func sharedObjectsWithDifferingContent() throws {
        let lines = (1...80).map { Self.event($0, login: { $0 % 8 == 1 ? "u\($0)" : "same\($0 % 8)" }) }
        let reordered = file(lines.reversed())
        let renamed = file(lines.map { $0.replacingOccurrences(of: "same2", with: "renamed2") }.reversed())
        let partly = file(
            lines.enumerated().map {
                $0.offset == 40 ? $0.element.replacingOccurrences(of: "same3", with: "x3") : $0.element
            })
        _ = try differential([[file(lines)], [reordered], [renamed], [partly], [reordered]])
    }

    /// Another writer of the store (a run under another mapping, a run in
    /// input order) voids the digests: the earlier dump again is parsed
    /// whole, and the store is the one a full run gives.
    @Test func anotherWriterVoidsTheDigests() throws {
        let day0 = file((1...100).map { Self.event($0) })
        let change = file([Self.event(5, score: 999), Self.event(6, score: 998)])
        let (skipping, parsing) = (store(), store())
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

    /// A run that writes without keeping digests says, once, that the next
    /// run parses everything; a store that had none gets no such warning.
    @Test func aRunInInputOrderSaysItVoidedTheDigests() throws {
        let target = store()
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
    @Test func aBrokenChangedRecordIsReportedWhereItIs() throws {
        let target = store()
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
