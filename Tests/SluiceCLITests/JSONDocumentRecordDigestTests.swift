import Foundation
import SluiceTestSupport
import Testing

/// Runs over one JSON document that skip the elements of its record path's
/// array whose digests the store kept (docs/record-digests.md), by the
/// binary, into SQLite stores and PostgreSQL databases: each must leave the
/// store a run that parses everything (`--no-skip`) leaves, and fail on a
/// damaged document as such a run fails (message, line, column, byte,
/// record number, exit status).
@Suite struct JSONDocumentRecordDigestTests {
    static let mapping = TestPaths.file(
        "json-document-digests.yml",
        """
        entities:
          Event:
            records: $.events[*]
            key: id
            attributes: {id: integer, kind: string, title: string, score: integer}
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

    /// Event `id` as one line of JSON.
    static func event(_ id: Int, score: Int? = nil, title: String? = nil) -> String {
        let title = title ?? "t\(id)"
        return #"{"id": \#(id), "kind": "k\#(id % 3)", "title": "\#(title)", "score": \#(score ?? id * 2), "#
            + #""actor": {"id": \#(id % 8), "login": "user\#(id % 8)"}, "tags": ["t\#(id % 4)"]}"#
    }

    /// A document whose `events` array holds `events`, one a line, between
    /// other members (one of them an array of objects on no record path).
    static func document(_ events: [String]) -> String {
        #"{"source": "test", "meta": [{"id": 1}], "events": ["# + "\n" + events.joined(separator: ",\n")
            + "\n" + #"], "count": \#(events.count)}"# + "\n"
    }

    func file(_ text: String) -> String { TestPaths.file("in-\(UUID().uuidString).json", text) }

    func store(_ kind: RecordDigestTests.Kind) throws -> String {
        switch kind {
        case .sqlite: return TestPaths.temporaryDirectory().appendingPathComponent("s.sqlite").path
        case .postgres: return try PostgresTestServer.require().newDatabase()
        }
    }

    /// Where a run into `store` writes its `--stats-json`.
    func stats(_ store: String) -> String {
        guard store.hasPrefix("host=") else { return store + ".json" }
        let name = store.split(separator: " ").first { $0.hasPrefix("dbname=") }?.dropFirst(7) ?? ""
        return Self.statsDirectory.appendingPathComponent("\(name).json").path
    }
    static let statsDirectory = TestPaths.temporaryDirectory()

    func run(_ store: String, _ arguments: [String], mapping: [String]? = nil) throws -> CommandResult {
        try runCommand(
            sluice,
            ["import"] + (mapping ?? ["--mapping", Self.mapping]) + ["--into", store, "--stats-json", stats(store)]
                + arguments)
    }

    func unchangedRecords(_ store: String) throws -> Int {
        let data = try Data(contentsOf: URL(fileURLWithPath: stats(store)))
        let object = try JSONSerialization.jsonObject(with: data) as? [String: Any]
        return object?["unchangedRecords"] as? Int ?? -1
    }

    func rows(_ store: String, tables: [String] = Self.tables) -> [[[String?]]] {
        let sql = tables.map { "SELECT * FROM \"\($0)\" ORDER BY 1\($0 == "Tag" ? "" : ", 2")" }
        guard store.hasPrefix("host=") else {
            let reader = StoreReader(store)
            return sql.map { reader.rows($0) }
        }
        let reader = PostgresReader(store)
        return sql.map { reader.rows($0) }
    }

    /// Applies each step to a store that skips and to one that parses
    /// everything, requiring both to succeed with the same rows after each;
    /// returns the unchanged records each skipping step reported.
    func differential(
        _ kind: RecordDigestTests.Kind, _ steps: [[String]], mapping: [String]? = nil,
        tables: [String] = Self.tables
    ) throws -> [Int] {
        let (skipping, parsing) = (try store(kind), try store(kind))
        var unchanged: [Int] = []
        for (index, step) in steps.enumerated() {
            let skipped = try run(skipping, step, mapping: mapping)
            #expect(skipped.status == 0, "\(step): \(skipped.stderr)")
            unchanged.append(try unchangedRecords(skipping))
            let parsed = try run(parsing, ["--no-skip"] + step, mapping: mapping)
            #expect(parsed.status == 0, "\(step): \(parsed.stderr)")
            #expect(try unchangedRecords(parsing) == 0)
            #expect(
                rows(skipping, tables: tables) == rows(parsing, tables: tables), "after step \(index + 1): \(step)")
        }
        return unchanged
    }

    /// The same document again parses no element; the next day's parses
    /// only its new and changed elements, whatever the chunks cut (a chunk
    /// of 5 bytes cuts elements and the members around the array), and with
    /// `--delete-missing` deletes what it no longer has.
    @Test(arguments: RecordDigestTests.kinds)
    func aSecondRunParsesOnlyTheChangedElements(kind: RecordDigestTests.Kind) throws {
        let day0 = file(Self.document((1...200).map { Self.event($0) }))
        var day1Events = (1...200).filter { $0 % 10 != 0 }.map { Self.event($0, score: $0 % 7 == 0 ? -$0 : nil) }
        day1Events += (201...210).map { Self.event($0) }
        let day1 = file(Self.document(day1Events.reversed()))
        let unchanged = try differential(
            kind,
            [[day0], [day0], ["--chunk-size", "5", day1], ["--delete-missing", day1], ["--delete-missing", day0]])
        // Day 1 drops 20 events, changes 26 of those it keeps (multiples of
        // 7 but not of 10) and adds 10; day 0 again brings back 46.
        #expect(unchanged == [0, 200, 200 - 20 - 26, 190, 200 - 20 - 26])
    }

    /// Without a mapping (`--entity`, `--key`), a `.json` file's records are
    /// the elements of its top-level array (`$[*]`): they skip too.
    @Test(arguments: RecordDigestTests.kinds) func zeroConfigArraysSkip(kind: RecordDigestTests.Kind) throws {
        let day0 = file("[\n" + (1...100).map { Self.event($0) }.joined(separator: ",\n") + "\n]\n")
        let day1 = file(
            "[" + (1...100).reversed().map { Self.event($0, score: $0 % 9 == 0 ? 0 : nil) }.joined(separator: ",") + "]"
        )
        let zeroConfig = ["--entity", "Record", "--key", "id"]
        let unchanged = try differential(
            kind, [[day0], [day0], [day1], [day0]], mapping: zeroConfig, tables: ["Record"])
        #expect(unchanged == [0, 100, 100 - 11, 100 - 11])
    }

    /// Standard input is spooled and skipped like the file (`--format`,
    /// which standard input needs, is given both runs: it is part of the
    /// digests' fingerprint).
    @Test func standardInputSkips() throws {
        let text = Self.document((1...50).map { Self.event($0) })
        let target = try store(.sqlite)
        #expect(try run(target, ["--format", "json", file(text)]).status == 0)
        let piped = try runCommand(
            sluice,
            [
                "import", "--mapping", Self.mapping, "--into", target, "--stats-json", stats(target), "--format",
                "json", "-",
            ],
            input: Data(text.utf8))
        #expect(piped.status == 0, "\(piped.stderr)")
        #expect(try unchangedRecords(target) == 50)
    }

    /// Copies of a store that trusts its digests: one for a run that skips,
    /// one for a full run.
    func pair(_ target: String) throws -> (String, String) {
        let (skipping, full) = (try store(.sqlite), try store(.sqlite))
        try FileManager.default.copyItem(atPath: target, toPath: skipping)
        try FileManager.default.copyItem(atPath: target, toPath: full)
        return (skipping, full)
    }

    /// Runs `text` into copies of `target` skipping and in full, and
    /// requires the same failure (status, message, place) and rows; the
    /// message must contain `expected`.
    func failsAlike(_ target: String, _ name: String, _ text: String, _ expected: String, chunk: Int?) throws {
        let (skipping, full) = try pair(target)
        let input = (chunk.map { ["--chunk-size", "\($0)"] } ?? []) + [file(text)]
        let skipped = try run(skipping, input)
        let parsed = try run(full, ["--no-skip"] + input)
        #expect(skipped.status != 0 && skipped.status == parsed.status, "\(name): \(skipped.stderr)")
        #expect(skipped.stderr == parsed.stderr, "\(name):\n\(skipped.stderr)\n\(parsed.stderr)")
        #expect(skipped.stderr.contains(expected), "\(name): \(skipped.stderr)")
        #expect(rows(skipping) == rows(full), "\(name)")
    }

    /// In a run that skips, a changed element that does not parse is
    /// reported where it is in its file (line, column, byte, record number),
    /// word for word as a full run reports it.
    @Test func aBrokenChangedElementIsReportedWhereItIs() throws {
        let target = try store(.sqlite)
        var events = (1...50).map { Self.event($0) }
        for _ in 0..<2 { #expect(try run(target, [file(Self.document(events))]).status == 0) }
        #expect(try unchangedRecords(target) == 50, "the second run skips every element")
        events[36] = events[36].replacingOccurrences(of: #""score": 74,"#, with: #""score": 74,,"#)
        try failsAlike(target, "a broken element", Self.document(events), ":38:", chunk: nil)
        try failsAlike(target, "a broken element", Self.document(events), "record 37", chunk: 7)
    }

    /// A document damaged only between the elements it skips, or right
    /// after one, fails a run that skips as it fails a full run: the same
    /// exit code and message (file, line, column, byte, record number), the
    /// same rows, from a store whose digests it trusts. The elements span
    /// lines (some ending in `\r\n`) with non-ASCII characters on their
    /// last; every other case is read in chunks of 7 bytes.
    @Test func damageAroundSkippedElementsFailsAsAFullRunFails() throws {
        let events = (1...40).map {
            Self.event($0, title: "\u{E9}t\u{E9}\($0)").replacingOccurrences(of: #", "kind""#, with: ",\r\n  \"kind\"")
                .replacingOccurrences(of: #", "actor""#, with: ",\n  \"actor\"")
        }
        let document = Self.document(events)
        let target = try store(.sqlite)
        for _ in 0..<2 { #expect(try run(target, [file(document)]).status == 0) }
        #expect(try unchangedRecords(target) == 40, "the second run skips every element")
        func damaged(_ index: Int, _ text: String) -> String {
            var damaged = events
            damaged[index] += text
            return Self.document(damaged)
        }
        let commaless = document.replacingOccurrences(of: events[9] + ",\n", with: events[9] + "\n")
        let cases: [(name: String, text: String, expected: String)] = [
            ("a word after an element", damaged(9, " x"), "record 11: lexical error"),
            ("a colon after an element", damaged(19, ":"), "record 21: parse error: after array element"),
            ("a comma missing before an element", commaless, "record 11: parse error: after array element"),
            ("a second comma", damaged(29, ","), "record 31: "),
            ("the document's end missing", String(document.dropLast(2)), "record 41"),
            (
                "a member's value missing after the array",
                document.replacingOccurrences(of: "\"count\": 40}", with: "\"count\": }"), "record 41"
            ),
            ("a truncated file", String(document.prefix(document.count * 2 / 3)), "record "),
            ("the array's end missing", document.replacingOccurrences(of: "\n],", with: "\n,"), "record 41"),
        ]
        for (index, damage) in cases.enumerated() {
            try failsAlike(target, damage.name, damage.text, damage.expected, chunk: index % 2 == 1 ? 7 : nil)
        }
    }
}
