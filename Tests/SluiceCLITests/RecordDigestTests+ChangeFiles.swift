import Foundation
import SluiceTestSupport
import Testing

/// A change file under a mapping of its own, between two runs of a dump
/// (docs/record-digests.md, "Other writers").
extension RecordDigestTests {
    /// The digests' mapping with deletions: `{"id": K, "deleted": true}`
    /// deletes event K.
    static let changes = TestPaths.file(
        "digest-changes.yml",
        """
        entities:
          Event:
            records: $
            key: id
            delete-when: {deleted: {equals: "true"}}
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

    /// The change file keeps the dump's digests and voids only the keys it
    /// wrote: the dump again parses the units that produced them (an event
    /// changed, one deleted, and the twelve other events of the actor whose
    /// login it changed) and skips the other 86, leaving the store a full
    /// run leaves; in PostgreSQL too, where the change file made a set of
    /// its own and the dump was parsed whole.
    @Test(arguments: kinds) func changeFileVoidsOnlyTheKeysItWrites(kind: Kind) throws {
        let day0 = file((1...100).map { Self.event($0) })
        let change = file([
            Self.event(5, score: 999), #"{"id": 6, "deleted": true}"#, Self.event(7, login: { _ in "renamed7" }),
            Self.event(101),
        ])
        let (skipping, parsing) = try dumpThenChange(kind, day0, change)
        let again = try run(skipping, [day0])
        #expect(again.stderr.isEmpty, "\(again.stderr)")
        #expect(try unchangedRecords(skipping) == 86)
        _ = try run(parsing, ["--no-skip", day0])
        #expect(rows(skipping) == rows(parsing))
        _ = try run(skipping, [day0])
        #expect(try unchangedRecords(skipping) == 100)
    }

    /// Two stores of `kind`, each given dump `day0` and then change file
    /// `change`: one with record digests, one with `--no-skip`.
    func dumpThenChange(_ kind: Kind, _ day0: String, _ change: String) throws -> (skipping: String, parsing: String) {
        let (skipping, parsing) = (try store(kind), try store(kind))
        for (target, extra) in [(skipping, [String]()), (parsing, ["--no-skip"])] {
            _ = try run(target, extra + [day0])
            let result = try runCommand(
                sluice, ["import", "--mapping", Self.changes, "--into", target] + extra + [change])
            #expect(result.status == 0, "\(result.stderr)")
        }
        return (skipping, parsing)
    }

    /// A change file that writes only an event's links (another tag for
    /// one, none for another, their rows as they were) voids those events'
    /// units: the dump again parses the two and restores their links.
    @Test(arguments: kinds) func aChangeFileThatWritesOnlyLinksVoidsTheirSources(kind: Kind) throws {
        let day0 = file((1...100).map { Self.event($0) })
        let change = file([
            Self.event(9).replacingOccurrences(of: #""tags": ["t1"]"#, with: #""tags": ["t1", "x"]"#),
            Self.event(10).replacingOccurrences(of: #""tags": ["t2"]"#, with: #""tags": []"#),
        ])
        let (skipping, parsing) = try dumpThenChange(kind, day0, change)
        #expect(rows(skipping) == rows(parsing))
        _ = try run(skipping, [day0])
        #expect(try unchangedRecords(skipping) == 98)
        _ = try run(parsing, ["--no-skip", day0])
        #expect(rows(skipping) == rows(parsing))
    }

    /// A change file keeps the tables the dump's set covers: its rows come
    /// from no unit of the set, but it voided the key of each, and the dump
    /// again with `--delete-missing` sweeps Event in proportion among those
    /// keys and the removed units' (docs/record-digests.md, "Delete-missing").
    /// It parses the two events the change file wrote that the dump has (5
    /// changed, 6 deleted, which comes back) and deletes 101, which only the
    /// change file added, as a full run does; Event stays covered, and the
    /// dump once more skips every record and deletes nothing.
    @Test(arguments: kinds) func aChangeFileKeepsTheTablesTheSetCovers(kind: Kind) throws {
        let day0 = file((1...100).map { Self.event($0) })
        let change = file([Self.event(5, score: 999), #"{"id": 6, "deleted": true}"#, Self.event(101)])
        let (skipping, parsing) = (try store(kind), try store(kind))
        var covered: [[[String?]]] = []
        for (target, extra) in [(skipping, [String]()), (parsing, ["--no-skip"])] {
            _ = try run(target, extra + ["--delete-missing", day0])
            _ = try run(target, extra + ["--delete-missing", day0])
            let result = try runCommand(
                sluice, ["import", "--mapping", Self.changes, "--into", target] + extra + [change])
            #expect(result.status == 0, "\(result.stderr)")
            if target == skipping { covered.append(values(target, Self.coveredEvent)) }
            _ = try run(target, extra + ["--delete-missing", day0])
            #expect(try deleted(target)["Event"] == 1)
        }
        #expect(rows(skipping) == rows(parsing))
        #expect(try unchangedRecords(skipping) == 98)
        covered.append(values(skipping, Self.coveredEvent))
        #expect(covered == [[["Event"]], [["Event"]]])
        _ = try run(skipping, ["--delete-missing", day0])
        #expect(try unchangedRecords(skipping) == 100 && deleted(skipping)["Event"] == 0)
    }

    /// Event among the tables the store's digest set covers.
    static let coveredEvent = "SELECT entity FROM _sluice_digest_covered WHERE entity = 'Event'"

    /// The rows `sql` reads from `store`, a SQLite file or a database.
    func values(_ store: String, _ sql: String) -> [[String?]] {
        store.hasPrefix("host=") ? PostgresReader(store).rows(sql) : StoreReader(store).rows(sql)
    }

    /// The sweep after a change file records only its candidates: refused by
    /// `--max-delete 0` (one event to delete), the dump's run keeps the keys
    /// it recorded, and Event's seen keys are only those of the two events
    /// it parsed, its candidates the three keys the change file wrote (before,
    /// with Event uncovered, the 98 skipped events' keys were recorded as seen
    /// too, and there were no candidates: the sweep read every row). Resumed
    /// with a larger limit, it deletes event 101, as a full run does.
    @Test(arguments: kinds) func theSweepAfterAChangeFileRecordsOnlyItsCandidates(kind: Kind) throws {
        let day0 = file((1...100).map { Self.event($0) })
        let change = file([Self.event(5, score: 999), #"{"id": 6, "deleted": true}"#, Self.event(101)])
        let (skipping, parsing) = (try store(kind), try store(kind))
        for (target, extra) in [(skipping, [String]()), (parsing, ["--no-skip"])] {
            _ = try run(target, extra + ["--delete-missing", day0])
            let result = try runCommand(
                sluice, ["import", "--mapping", Self.changes, "--into", target] + extra + [change])
            #expect(result.status == 0, "\(result.stderr)")
            let sweep = ["import", "--mapping", Self.mapping, "--into", target, "--stats-json", stats(target)] + extra
            let refused = try runCommand(sluice, sweep + ["--delete-missing", "--max-delete", "0", day0])
            #expect(refused.status == 65, "\(refused.stderr)")
            if target == skipping {
                #expect(values(target, #"SELECT id FROM "_sluice_seen_Event" ORDER BY 1"#) == [["5"], ["6"]])
                #expect(
                    values(target, #"SELECT id FROM "_sluice_removed_Event" ORDER BY 1"#) == [["5"], ["6"], ["101"]])
            }
            let resumed = try runCommand(sluice, sweep + ["--delete-missing", "--max-delete", "1", "--resume", day0])
            #expect(resumed.status == 0, "\(resumed.stderr)")
            #expect(try deleted(target)["Event"] == 1)
        }
        #expect(rows(skipping) == rows(parsing))
    }
}
