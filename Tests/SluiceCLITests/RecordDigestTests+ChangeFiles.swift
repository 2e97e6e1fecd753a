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
        let (skipping, parsing) = (try store(kind), try store(kind))
        for (target, extra) in [(skipping, [String]()), (parsing, ["--no-skip"])] {
            _ = try run(target, extra + [day0])
            let result = try runCommand(
                sluice, ["import", "--mapping", Self.changes, "--into", target] + extra + [change])
            #expect(result.status == 0, "\(result.stderr)")
        }
        let again = try run(skipping, [day0])
        #expect(again.stderr.isEmpty, "\(again.stderr)")
        #expect(try unchangedRecords(skipping) == 86)
        _ = try run(parsing, ["--no-skip", day0])
        #expect(rows(skipping) == rows(parsing))
        _ = try run(skipping, [day0])
        #expect(try unchangedRecords(skipping) == 100)
    }

    /// A change file's rows come from no unit of the dump's set: the tables
    /// the set covered are forgotten, so the dump again with
    /// `--delete-missing` sweeps Event whole and deletes the event only the
    /// change file added, as a full run does (swept in proportion, it kept
    /// it: no removed unit produced its key).
    @Test(arguments: kinds) func aChangeFileLeavesNoTableCoveredForTheNextSweep(kind: Kind) throws {
        let day0 = file((1...100).map { Self.event($0) })
        let change = file([Self.event(5, score: 999), Self.event(101)])
        let (skipping, parsing) = (try store(kind), try store(kind))
        for (target, extra) in [(skipping, [String]()), (parsing, ["--no-skip"])] {
            _ = try run(target, extra + ["--delete-missing", day0])
            _ = try run(target, extra + ["--delete-missing", day0])
            let result = try runCommand(
                sluice, ["import", "--mapping", Self.changes, "--into", target] + extra + [change])
            #expect(result.status == 0, "\(result.stderr)")
            _ = try run(target, extra + ["--delete-missing", day0])
            #expect(try deleted(target)["Event"] == 1)
        }
        #expect(rows(skipping) == rows(parsing))
        #expect(try unchangedRecords(skipping) == 99)
    }
}
