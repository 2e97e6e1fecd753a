import Foundation
import Sluice
import SluiceTestSupport
import Testing

/// The dangling counts a SQLite store keeps up to date (`_sluice_dangling`
/// and its triggers) against a recount after every run of random sequences:
/// inserts, updates that change references, deletions of targets and of
/// referrers (delete-missing, change-file deletions), stubs, links added and
/// removed, dry runs, runs that fail or are cancelled half-way, both apply
/// orders.
@Suite struct KeptDanglingCountTests {
    let yaml = """
        entities:
          Post:
            records: $
            key: id
            delete-when: {deleted: {equals: "true"}}
            attributes: {id: integer, title: string}
            relationships:
              owner: {entity: User, source: owner}
              author: {entity: User, source: author}
              parent: {entity: Post, source: parent}
              editor: {entity: User, source: editor, missing: stub}
              tags: {entity: Tag, source: "tags[*]", many: true}
              labels: {entity: Tag, source: "labels[*]", many: true}
              fans: {entity: User, source: "fans[*]", many: true, missing: stub}
          User:
            key: id
            attributes: {id: integer, name: string}
          Tag:
            key: name
            attributes: {name: string}
        """

    /// Each relationship's count, by a query of the test's own (quoted
    /// names, so that PostgreSQL runs the same queries).
    static let recounts: [String: String] = [
        "Post.owner": reference("owner", "User", "id"),
        "Post.author": reference("author", "User", "id"),
        "Post.parent": reference("parent", "Post", "id"),
        "Post.editor": reference("editor", "User", "id"),
        "Post_tags": link("Post_tags", "Tag_name", "Tag", "name"),
        "Post_labels": link("Post_labels", "Tag_name", "Tag", "name"),
        "Post_fans": link("Post_fans", "User_id", "User", "id"),
    ]

    static func reference(_ column: String, _ table: String, _ key: String) -> String {
        "SELECT count(*) FROM \"Post\" s WHERE s.\(column) IS NOT NULL "
            + "AND s.\(column) NOT IN (SELECT \(key) FROM \"\(table)\")"
    }

    static func link(_ name: String, _ column: String, _ table: String, _ key: String) -> String {
        "SELECT count(*) FROM \"\(name)\" WHERE \"\(column)\" NOT IN (SELECT \(key) FROM \"\(table)\")"
    }

    /// A random post record: references to users and posts that may or may
    /// not exist, nested users and tags that create them, tags by name.
    static func post(_ id: Int, _ random: inout SplitMix) -> String {
        var members = ["\"id\": \(id)", "\"title\": \"t\(Int.random(in: 0..<3, using: &random))\""]
        if Bool.random(using: &random) { members.append("\"owner\": \(Int.random(in: 1...12, using: &random))") }
        if Int.random(in: 0..<3, using: &random) == 0 {
            let user = Int.random(in: 1...12, using: &random)
            members.append("\"author\": {\"id\": \(user), \"name\": \"u\(user)\"}")
        }
        if Bool.random(using: &random) { members.append("\"parent\": \(Int.random(in: 1...30, using: &random))") }
        if Int.random(in: 0..<4, using: &random) == 0 {
            members.append("\"editor\": \(Int.random(in: 1...14, using: &random))")
        }
        let tags = (0..<Int.random(in: 0...3, using: &random)).map { _ in
            "\"g\(Int.random(in: 1...6, using: &random))\""
        }
        members.append("\"tags\": [\(Set(tags).sorted().joined(separator: ", "))]")
        if Bool.random(using: &random) {
            let labels = (0..<Int.random(in: 1...2, using: &random)).map { _ in
                Int.random(in: 1...6, using: &random)
            }
            members.append(
                "\"labels\": [\(Set(labels).sorted().map { "{\"name\": \"g\($0)\"}" }.joined(separator: ", "))]")
        }
        if Int.random(in: 0..<3, using: &random) == 0 {
            members.append("\"fans\": [\(Int.random(in: 1...14, using: &random))]")
        }
        return "{" + members.joined(separator: ", ") + "}"
    }

    /// The kept counts, by name (nil: unknown).
    static func kept(_ store: String) -> [String: String?] {
        var counts: [String: String?] = [:]
        for row in StoreReader(store).rows("SELECT name, count FROM _sluice_dangling") where row.count == 2 {
            counts[row[0] ?? ""] = row[1]
        }
        return counts
    }

    @Test(arguments: 0..<16)
    func theKeptCountsEqualARecountAfterEveryRun(seed: Int) throws {
        var random = SplitMix(seed: UInt64(seed))
        let store = newStore()
        var keptThrough = 0
        for run in 0..<10 {
            var options = ImportOptions()
            options.batch.maxRows = Int.random(in: 2...6, using: &random)
            options.order = Bool.random(using: &random) ? .key : .input
            var records: [String]
            if run == 0 || Bool.random(using: &random) {
                records = (1...30).filter { _ in Int.random(in: 0..<5, using: &random) < 3 }.map {
                    Self.post($0, &random)
                }
                if records.isEmpty { records = [Self.post(1, &random)] }
                options.store.deleteMissing = run > 0 && Bool.random(using: &random)
            } else {
                records = (0..<Int.random(in: 1...6, using: &random)).map { _ in
                    let id = Int.random(in: 1...30, using: &random)
                    return Bool.random(using: &random) ? "{\"id\": \(id), \"deleted\": true}" : Self.post(id, &random)
                }
            }
            options.dryRun = run > 0 && Int.random(in: 0..<5, using: &random) == 0
            let fails = run > 0 && Int.random(in: 0..<6, using: &random) == 0
            if fails { records.append("{\"id\": ") }
            // Some runs are cancelled at a record: what they committed stays.
            let cancellation = ImportCancellation()
            var hooks: [String: EntityHooks] = [:]
            if !fails && run > 0 && Int.random(in: 0..<6, using: &random) == 0 {
                let record = Int.random(in: 1...records.count, using: &random)
                hooks["Post"] = EntityHooks(willImport: { if $0.ordinal == record { cancellation.cancel() } })
            }
            let before = Self.kept(store)
            let input = TestPaths.file("run\(run).jsonl", records.joined(separator: "\n"))
            let report = try? Importer(mapping: Mapping.parse(yaml: yaml), store: store, options: options, hooks: hooks)
                .runBlocking(inputs: [input], cancellation: cancellation)
            if fails { #expect(report == nil, "seed \(seed) run \(run)") }
            let reader = StoreReader(store)
            let kept = Self.kept(store)
            #expect(Set(kept.keys) == Set(Self.recounts.keys), "seed \(seed) run \(run)")
            for (name, sql) in Self.recounts {
                let recount = reader.value(sql)
                if let count = kept[name], let count {
                    #expect(
                        count == recount, "seed \(seed) run \(run): \(name) kept \(count), recount \(recount ?? "")")
                    if before[name] != nil, before[name] ?? nil != nil { keptThrough += 1 }
                }
                if let report, !options.dryRun {
                    #expect(String(report.dangling[name] ?? 0) == recount, "seed \(seed) run \(run): \(name)")
                }
            }
        }
        // Most counts were kept through runs, not counted again.
        #expect(keptThrough > 20, "seed \(seed)")
    }

    @Test func aKeptCountIsReadNotCountedAgain() throws {
        let store = newStore()
        let first = "{\"id\": 1, \"owner\": 5, \"tags\": [\"x\"]}\n{\"id\": 2, \"owner\": 2, \"tags\": []}"
        let report = try sync(yaml, first, store: store)
        #expect(report.dangling == ["Post.owner": 2, "Post_tags": 1])
        // A count the store keeps is what the next run reports: set it to 40,
        // and a run that changes one reference reports 40 changed by one.
        #expect(
            StoreReader(store, writable: true).rows("UPDATE _sluice_dangling SET count = 40 WHERE name = 'Post.owner'")
                .isEmpty)
        let next = try sync(yaml, "{\"id\": 3, \"owner\": 9}", store: store, name: "change.jsonl")
        #expect(next.dangling["Post.owner"] == 41)
        #expect(next.dangling["Post_tags"] == 1)
    }

    @Test func aRebuiltTableLetsTheCountsGoAndTheNextRunCountsThem() throws {
        let store = newStore()
        try sync(yaml, "{\"id\": 1, \"owner\": 5}", store: store)
        #expect(Self.kept(store)["Post.owner"] == "1")
        // The mapping changes a column's type: the table is rebuilt.
        let changed = yaml.replacingOccurrences(
            of: "{id: integer, title: string}", with: "{id: integer, title: integer}")
        let report = try sync(changed, "{\"id\": 2, \"owner\": 6}", store: store, name: "next.jsonl")
        #expect(report.dangling["Post.owner"] == 2)
        #expect(Self.kept(store)["Post.owner"] == "2")
        let again = try sync(
            changed, "{\"id\": 3, \"owner\": 3}\n{\"id\": 4, \"owner\": 1}", store: store, name: "3.jsonl")
        #expect(again.dangling["Post.owner"] == 4)
        #expect(Self.kept(store)["Post.owner"] == "4")
    }

    @Test func aTargetTableDroppedByHandTakesItsCountsTriggersWithIt() throws {
        let store = newStore()
        try sync(yaml, "{\"id\": 1, \"owner\": 5, \"fans\": [7]}", store: store)
        #expect(Self.kept(store)["Post.owner"] == "1")
        // The users go, by hand and from the mapping: the triggers on Post
        // that read User would fail every insert into Post.
        #expect(StoreReader(store, writable: true).rows("DROP TABLE User").isEmpty)
        let postsOnly = "entities: {Post: {records: $, key: id, attributes: {id: integer, owner: integer}}}"
        let report = try sync(postsOnly, "{\"id\": 2, \"owner\": 6}", store: store, name: "next.jsonl")
        #expect(report[entity: "Post"]?.inserted == 1)
        #expect(Self.kept(store)["Post.owner"] == nil)
        #expect(Self.kept(store)["Post_fans"] == nil)
        #expect(StoreReader(store).value("SELECT count(*) FROM sqlite_schema WHERE sql LIKE '%\"User\"%'") == "0")
    }
}
