import Foundation
import SluiceTestSupport
import Testing

/// A change file that deletes events with links, applied in key order: the
/// deleted events' links go in the link table's batches (or at the end of
/// the link tables), after the Event batches that deleted the rows
/// (`SQLiteStore+DeferredUnlinks`).
extension SyncCrashTests {
    /// The sync mapping with deletions: `{"id": K, "deleted": true}`
    /// deletes event K.
    static let unlinkMapping = TestPaths.file(
        "unlink-changes.yml",
        TestMappings.sync.replacingOccurrences(
            of: "    key: id\n", with: "    key: id\n    delete-when: {deleted: {equals: \"true\"}}\n"))

    /// A change file against events 1 to `events` (a multiple of 3,000): a
    /// third of them deleted, and, unless `deletionsOnly`, a sixth with
    /// other tags, every thousandth but one in three written with new tags
    /// first and deleted last (39 of 60,000), 20 of the deleted written
    /// again with tags after their deletion, and 500 new events.
    static func unlinkChanges(deletionsOnly: Bool, events: Int = 60_000) -> String {
        func event(_ id: Int, _ tags: String) -> String {
            #"{"id": \#(id), "kind": "k\#(id % 7)", "score": \#(-id), "tags": [\#(tags)]}"#
        }
        let writtenThenDeleted =
            deletionsOnly ? [] : (1..<(events / 1_000)).map { $0 * 1_000 + 1 }.filter { $0 % 3 != 0 }
        var lines = writtenThenDeleted.map { event($0, #""x\#($0 % 3)""#) }
        for id in 1...events {
            if id % 3 == 0 {
                lines.append(#"{"id": \#(id), "deleted": true}"#)
            } else if !deletionsOnly && id % 6 == 1 {
                lines.append(event(id, #""w\#(id % 4)", "t\#(id % 5)""#))
            }
        }
        if !deletionsOnly {
            for id in stride(from: 3, to: events, by: events / 20) { lines.append(event(id, #""y\#(id % 2)", "z""#)) }
            for id in writtenThenDeleted { lines.append(#"{"id": \#(id), "deleted": true}"#) }
            for id in (events + 1)...(events + 500) { lines.append(event(id, #""t\#(id % 5)""#)) }
        }
        let name = deletionsOnly ? "unlink-deletions.jsonl" : "unlink-changes.jsonl"
        return TestPaths.file(name, lines.joined(separator: "\n") + "\n")
    }

    /// Links whose event is not stored: only between the Event batches of
    /// a change file and the link batches that delete those events' links.
    static let orphanLinks =
        "SELECT count(*) FROM Event_tags l WHERE NOT EXISTS (SELECT 1 FROM Event e WHERE e.id = l.Event_id)"

    /// The tables, the dangling counts the store keeps, and the links of the
    /// events the change file deleted.
    func unlinkState(_ store: String) -> [[[String?]]] {
        dump(store) + [
            Self.rows(store, "SELECT * FROM _sluice_dangling ORDER BY 1"),
            Self.rows(store, Self.orphanLinks),
        ]
    }

    /// A copy of `base` in `directory` on which `change` was killed once an
    /// Event batch had deleted rows whose links still stand; returns it and
    /// how many such links the kill left (0 when the run ended first).
    func killedBeforeTheLinkBatches(
        _ change: [String], copying base: String, in directory: URL, _ attempt: Int
    ) throws -> (store: String, orphans: Int) {
        let store = directory.appendingPathComponent("crash\(attempt).sqlite").path
        try FileManager.default.copyItem(atPath: base, toPath: store)
        let wasKilled = try killed(change, into: store, once: Self.orphanLinks)
        return (store, wasKilled ? Self.number(store, Self.orphanLinks) : 0)
    }

    /// The change file in key order ends where the same file in input order
    /// ends (whose Event batches delete the links with the rows, as every
    /// run did before): the same events, links, tags and dangling counts,
    /// no link of a deleted event; killed once an Event batch deleted rows
    /// whose links still stand (a point that did not exist before: the
    /// rows and their links went in one transaction), then resumed or run
    /// afresh, it ends there too.
    @Test(arguments: [(false, true), (false, false), (true, true)])
    func aChangeFileKilledBeforeItsLinkBatchesEndsWhereAnUninterruptedOneEnds(
        deletionsOnly: Bool, resume: Bool
    ) throws {
        let directory = TestPaths.temporaryDirectory()
        let base = directory.appendingPathComponent("base.sqlite").path
        #expect(try runCommand(sluice, ["import", "--mapping", mapping, "--into", base, Self.all]).status == 0)
        let change = [
            "import", "--mapping", Self.unlinkMapping, "--batch-rows", "500",
            Self.unlinkChanges(deletionsOnly: deletionsOnly),
        ]
        let reference = directory.appendingPathComponent("reference.sqlite").path
        try FileManager.default.copyItem(atPath: base, toPath: reference)
        let clean = try runCommand(sluice, change + ["--into", reference])
        #expect(clean.status == 0, "\(clean.stderr)")
        let expected = unlinkState(reference)
        #expect(expected[0].count == (deletionsOnly ? 40_000 : 40_481))
        #expect(expected[4] == [["0"]])
        let inputOrder = directory.appendingPathComponent("input.sqlite").path
        try FileManager.default.copyItem(atPath: base, toPath: inputOrder)
        let byInput = try runCommand(sluice, change + ["--order", "input", "--into", inputOrder])
        #expect(byInput.status == 0, "\(byInput.stderr)")
        #expect(unlinkState(inputOrder) == expected)

        var landed = false
        for attempt in 0..<4 where !landed {
            let (store, orphans) = try killedBeforeTheLinkBatches(change, copying: base, in: directory, attempt)
            landed = orphans > 0
            let again = try runCommand(sluice, change + ["--into", store] + (resume ? ["--resume"] : []))
            #expect(again.status == 0, "attempt \(attempt): \(again.stderr)")
            #expect(StoreReader(store).value("PRAGMA integrity_check") == "ok")
            #expect(unlinkState(store) == expected, "attempt \(attempt): killed with \(orphans) orphan links")
            #expect(statuses(store).last == "completed", "attempt \(attempt): \(statuses(store))")
        }
        #expect(landed, "no kill landed between the Event batches and the links' deletion")
    }

    /// Killed at the same point, then followed by another run — another
    /// file, in input order, which holds no keys of its own — and not by
    /// the change file again: that run deletes the links the killed one
    /// left before it writes (`finishLeftUnlinks`), so every stored event
    /// keeps exactly its links, no link is left of a deleted one, and
    /// nothing holds keys any more.
    @Test func aChangeFileKilledBeforeItsLinkBatchesLeavesNoLinksToTheNextRun() throws {
        let directory = TestPaths.temporaryDirectory()
        let base = directory.appendingPathComponent("base.sqlite").path
        #expect(try runCommand(sluice, ["import", "--mapping", mapping, "--into", base, Self.all]).status == 0)
        let change = [
            "import", "--mapping", Self.unlinkMapping, "--batch-rows", "500", Self.unlinkChanges(deletionsOnly: true),
        ]
        let next = [
            "import", "--mapping", mapping, "--order", "input",
            Self.events([60_001], name: "unlink-next.jsonl"),
        ]
        let reference = directory.appendingPathComponent("reference.sqlite").path
        try FileManager.default.copyItem(atPath: base, toPath: reference)
        #expect(try runCommand(sluice, change + ["--into", reference]).status == 0)
        #expect(try runCommand(sluice, next + ["--into", reference]).status == 0)
        let expected = unlinkState(reference)
        #expect(expected[4] == [["0"]])
        let baseLinks = dump(base)[1]

        var landed = false
        for attempt in 0..<4 where !landed {
            let (store, orphans) = try killedBeforeTheLinkBatches(change, copying: base, in: directory, attempt)
            landed = orphans > 0
            let after = try runCommand(sluice, next + ["--into", store])
            #expect(after.status == 0, "attempt \(attempt): \(after.stderr)")
            let state = unlinkState(store)
            let stored = Set(state[0].map { $0[0] })
            let links = baseLinks.filter { stored.contains($0[0]) } + expected[1].filter { $0[0] == "60001" }
            #expect(state[1] == links, "attempt \(attempt): killed with \(orphans) orphan links")
            #expect(state[4] == [["0"]], "attempt \(attempt)")
            #expect(StoreReader(store).value("PRAGMA integrity_check") == "ok")
            let held = "SELECT count(*) FROM sqlite_schema WHERE name LIKE '\\_sluice\\_unlink\\_%' ESCAPE '\\'"
            #expect(Self.number(store, held) == 0, "attempt \(attempt)")
        }
        #expect(landed, "no kill landed between the Event batches and the links' deletion")
    }

    /// The change file's first run into a new store (last round's osmChange
    /// lesson: a change file into a new store is a case of its own): its
    /// deletions find no row, and the only links it may leave are those of
    /// the events it writes, among them 3 written with tags and deleted
    /// last (held sources whose links its link batches must not write) and
    /// 20 deleted and written again. In key order, keeping digests, it ends
    /// where `--order input --no-skip` ends: the same events, links, tags
    /// and dangling counts, no link of a deleted event. The file is made
    /// against 6,000 events (3,526 records, 8 batches), not 60,000: its
    /// 30,598 records took 3 to 6 s a run of the debug build.
    @Test(arguments: [false, true]) func aChangeFileIntoANewStoreEndsWhereInputOrderEnds(deletionsOnly: Bool) throws {
        let directory = TestPaths.temporaryDirectory()
        let change = [
            "import", "--mapping", Self.unlinkMapping, "--batch-rows", "500",
            Self.unlinkChanges(deletionsOnly: deletionsOnly, events: 6_000),
        ]
        let reference = directory.appendingPathComponent("reference.sqlite").path
        let byInput = try runCommand(sluice, change + ["--order", "input", "--no-skip", "--into", reference])
        #expect(byInput.status == 0, "\(byInput.stderr)")
        let expected = unlinkState(reference)
        #expect(expected[0].count == (deletionsOnly ? 0 : 1_519))
        #expect(expected[4] == [["0"]])
        let store = directory.appendingPathComponent("key.sqlite").path
        let byKey = try runCommand(sluice, change + ["--into", store])
        #expect(byKey.status == 0, "\(byKey.stderr)")
        #expect(unlinkState(store) == expected)
        #expect(StoreReader(store).value("PRAGMA integrity_check") == "ok")
    }

    /// The change file in zero-config form (`--entity --key`), into a new
    /// store and onto one a zero-config import of events 1 to 6,000 made.
    /// Without a mapping there is no link table and no `delete-when`: the
    /// tags are a column of JSON text, `{"id": K, "deleted": true}` is a
    /// record like the others (its `deleted` a column the run adds), and
    /// the deferred unlinks are never reached (nor is any deletion). What
    /// the file does reach is a table whose columns grow during the run and
    /// keys written two or three times with other members each time: in
    /// key order, keeping digests, it ends where `--order input --no-skip`
    /// ends, row for row.
    @Test(arguments: [true, false]) func aZeroConfigChangeFileEndsWhereInputOrderEnds(intoANewStore: Bool) throws {
        let directory = TestPaths.temporaryDirectory()
        let zeroConfig = ["import", "--entity", "Event", "--key", "id", "--batch-rows", "500"]
        let base = directory.appendingPathComponent("base.sqlite").path
        if !intoANewStore {
            let day0 = Self.events(Array(1...6_000), name: "day0.jsonl")
            #expect(try runCommand(sluice, zeroConfig + ["--into", base, day0]).status == 0)
        }
        let changes = Self.unlinkChanges(deletionsOnly: false, events: 6_000)
        var ends: [[[String?]]] = []
        for (name, order) in [("key", []), ("input", ["--order", "input", "--no-skip"])] {
            let store = directory.appendingPathComponent("\(name).sqlite").path
            if !intoANewStore { try FileManager.default.copyItem(atPath: base, toPath: store) }
            let run = try runCommand(sluice, zeroConfig + order + ["--into", store, changes])
            #expect(run.status == 0, "\(name): \(run.stderr)")
            let reader = StoreReader(store)
            ends.append(
                reader.rows("SELECT name, type FROM pragma_table_info('Event') ORDER BY cid")
                    + reader.rows("SELECT * FROM Event ORDER BY id"))
        }
        #expect(ends[0] == ends[1])
        #expect(ends[0].count == (intoANewStore ? 5 + 3_502 : 7 + 6_500))
    }
}
