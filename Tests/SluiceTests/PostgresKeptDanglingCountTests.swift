import Foundation
import Sluice
import SluiceTestSupport
import Testing

/// The dangling counts a PostgreSQL database keeps up to date
/// (`_sluice_dangling`, the changes its statement triggers append to
/// `_sluice_dangling_changes`) against a recount after every run of the
/// random sequences of ``KeptDanglingCountTests`` (inserts, updates that
/// change references, a self-reference, deletions of targets and of
/// referrers, stubs, links, dry runs, failed and cancelled runs, both apply
/// orders), a type migration, and two runs that overlap.
@Suite(
    .serialized,
    .enabled(if: PostgresTestServer.enabled, "no PostgreSQL server could be started (the reason is on standard error)"))
struct PostgresKeptDanglingCountTests {
    let yaml = KeptDanglingCountTests().yaml

    /// The kept counts with the changes not folded yet, by name (nil:
    /// unknown).
    static func kept(_ database: String) -> [String: String?] { PostgresReader(database).keptDanglingCounts() }

    /// Requires each known kept count of `database` to equal its recount;
    /// returns how many were known.
    @discardableResult
    static func expectKeptEqualRecount(_ database: String, _ context: String) -> Int {
        let kept = kept(database)
        let reader = PostgresReader(database)
        var known = 0
        for (name, sql) in KeptDanglingCountTests.recounts {
            guard let count = kept[name], let count else { continue }
            known += 1
            let recount = reader.value(sql)
            #expect(count == recount, "\(context): \(name) kept \(count), recount \(recount ?? "")")
        }
        return known
    }

    @Test(arguments: 0..<4)
    func theKeptCountsEqualARecountAfterEveryRun(seed: Int) throws {
        let database = try PostgresTestServer.require().newDatabase()
        var random = SplitMix(seed: UInt64(seed))
        var keptThrough = 0
        for run in 0..<10 {
            var options = ImportOptions()
            options.batch.maxRows = Int.random(in: 2...6, using: &random)
            options.order = Bool.random(using: &random) ? .key : .input
            var records: [String]
            if run == 0 || Bool.random(using: &random) {
                records = (1...30).filter { _ in Int.random(in: 0..<5, using: &random) < 3 }.map {
                    KeptDanglingCountTests.post($0, &random)
                }
                if records.isEmpty { records = [KeptDanglingCountTests.post(1, &random)] }
                options.store.deleteMissing = run > 0 && Bool.random(using: &random)
            } else {
                records = (0..<Int.random(in: 1...6, using: &random)).map { _ in
                    let id = Int.random(in: 1...30, using: &random)
                    return Bool.random(using: &random)
                        ? "{\"id\": \(id), \"deleted\": true}" : KeptDanglingCountTests.post(id, &random)
                }
            }
            options.dryRun = run > 0 && Int.random(in: 0..<5, using: &random) == 0
            let fails = run > 0 && Int.random(in: 0..<6, using: &random) == 0
            if fails { records.append("{\"id\": ") }
            let cancellation = ImportCancellation()
            var hooks: [String: EntityHooks] = [:]
            if !fails && run > 0 && Int.random(in: 0..<6, using: &random) == 0 {
                let record = Int.random(in: 1...records.count, using: &random)
                hooks["Post"] = EntityHooks(willImport: { if $0.ordinal == record { cancellation.cancel() } })
            }
            let before = Self.kept(database)
            let input = TestPaths.file("run\(run).jsonl", records.joined(separator: "\n"))
            let report = try? Importer(
                mapping: Mapping.parse(yaml: yaml), store: database, options: options, hooks: hooks
            ).runBlocking(inputs: [input], cancellation: cancellation)
            if fails { #expect(report == nil, "seed \(seed) run \(run)") }
            let context = "seed \(seed) run \(run)"
            #expect(Set(Self.kept(database).keys) == Set(KeptDanglingCountTests.recounts.keys), "\(context)")
            Self.expectKeptEqualRecount(database, context)
            let reader = PostgresReader(database)
            for (name, sql) in KeptDanglingCountTests.recounts {
                if let count = before[name], count != nil, Self.kept(database)[name] ?? nil != nil { keptThrough += 1 }
                if let report, !options.dryRun {
                    #expect(String(report.dangling[name] ?? 0) == reader.value(sql), "\(context): \(name)")
                }
            }
        }
        // Most counts were kept through runs, not counted again.
        #expect(keptThrough > 20, "seed \(seed)")
    }

    @Test func aKeptCountIsReadNotCountedAgain() throws {
        let database = try PostgresTestServer.require().newDatabase()
        let first = "{\"id\": 1, \"owner\": 5, \"tags\": [\"x\"]}\n{\"id\": 2, \"owner\": 2, \"tags\": []}"
        let report = try sync(yaml, first, store: database)
        #expect(report.dangling["Post.owner"] == 2)
        #expect(report.dangling["Post_tags"] == 1)
        // A count the database keeps is what the next run reports: set it to
        // 40, and a run that adds one dangling reference reports 41.
        #expect(PostgresReader(database).rows("UPDATE _sluice_dangling SET count = 40 WHERE name = 'Post.owner'") == [])
        let next = try sync(yaml, "{\"id\": 3, \"owner\": 9}", store: database, name: "change.jsonl")
        #expect(next.dangling["Post.owner"] == 41)
        #expect(next.dangling["Post_tags"] == 1)
        // The user arrives (a target inserted): the kept count follows.
        let user = try sync(
            yaml, "{\"id\": 4, \"author\": {\"id\": 9, \"name\": \"n\"}}", store: database, name: "u.jsonl")
        #expect(user.dangling["Post.owner"] == 40)
    }

    @Test func aTypeMigrationMakesTheCountsUnknownAndTheRunCountsThem() throws {
        let database = try PostgresTestServer.require().newDatabase()
        try sync(yaml, "{\"id\": 1, \"owner\": 5}", store: database)
        #expect(Self.kept(database)["Post.owner"] == "1")
        #expect(PostgresReader(database).rows("UPDATE _sluice_dangling SET count = 40 WHERE name = 'Post.owner'") == [])
        let changed = yaml.replacingOccurrences(
            of: "{id: integer, title: string}", with: "{id: integer, title: integer}")
        let report = try sync(changed, "{\"id\": 2, \"owner\": 6}", store: database, name: "next.jsonl")
        #expect(report.dangling["Post.owner"] == 2)
        #expect(Self.kept(database)["Post.owner"] == "2")
        #expect(Self.expectKeptEqualRecount(database, "after the migration") == KeptDanglingCountTests.recounts.count)
    }

    @Test func runsThatOverlapKeepNoCountAndTheNextRunCountsAgain() throws {
        let database = try PostgresTestServer.require().newDatabase()
        try sync(yaml, "{\"id\": 1, \"owner\": 5}\n{\"id\": 2, \"owner\": 6}", store: database)
        #expect(Self.kept(database)["Post.owner"] == "2")
        // While one run reads its input, another runs from start to end: a
        // user arrives and a post names a missing one.
        let mapping = try Mapping.parse(yaml: yaml)
        let inner = InnerRun()
        let hooks = [
            "Post": EntityHooks(willImport: { record in
                guard record.ordinal == 1 else { return }
                do {
                    inner.report = try Importer(mapping: mapping, store: database).runBlocking(inputs: [
                        TestPaths.file(
                            "inner.jsonl", "{\"id\": 7, \"author\": {\"id\": 5, \"name\": \"u\"}, \"owner\": 8}")
                    ])
                } catch { inner.failure = error }
            })
        ]
        let outer = try Importer(mapping: mapping, store: database, hooks: hooks).runBlocking(inputs: [
            TestPaths.file("outer.jsonl", "{\"id\": 3, \"owner\": 6}")
        ])
        #expect(inner.failure == nil)
        #expect(inner.report?.dangling["Post.owner"] == 2)
        #expect(outer.dangling["Post.owner"] == 3)
        #expect(Self.kept(database)["Post.owner"] == .some(nil))
        // The next run, alone, counts again and keeps the count.
        let next = try sync(yaml, "{\"id\": 4, \"owner\": 5}", store: database, name: "next.jsonl")
        #expect(next.dangling["Post.owner"] == 3)
        #expect(Self.kept(database)["Post.owner"] == "3")
        #expect(Self.expectKeptEqualRecount(database, "after the overlap") == KeptDanglingCountTests.recounts.count)
    }
}

/// What the run inside another run's hook gave.
private final class InnerRun: @unchecked Sendable {
    var report: ImportReport?
    var failure: (any Error)?
}
