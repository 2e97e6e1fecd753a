import Foundation
import SluiceTestSupport
import Testing

@testable import Sluice

@Suite struct EarlyReferenceCountTests {
    let owners = """
        entities:
          Post: {records: $, key: id, attributes: {id: integer},
                 relationships: {owner: {entity: User, source: owner}, tags: {entity: Tag, source: "tags[*]", many: true, missing: stub}}}
          User: {key: id, attributes: {id: integer}}
          Tag: {key: name, attributes: {name: string}}
        """
    /// Owners as references, watchers as a link that stubs missing users.
    let watchers = """
        entities:
          Post: {records: $, key: id, attributes: {id: integer},
                 relationships: {owner: {entity: User, source: owner}, watchers: {entity: User, source: "watchers[*]", many: true, missing: stub}}}
          User: {key: id, attributes: {id: integer}}
        """
    let posts = """
        {"id": 1, "owner": {"id": 7}, "tags": ["a"]}
        {"id": 2, "owner": 8, "tags": ["b"]}
        {"id": 3, "owner": 9}
        """

    @Test func anEntityIsCountedOnceItAndItsTargetsAreFinal() throws {
        let store = newStore()
        try importText(owners, "p.jsonl", posts, store: store)
        let compiled = try CompiledMapping(Mapping.parse(yaml: owners))
        let early = try #require(
            EarlyReferenceCounts(
                store: try SQLiteStore(path: store), compiled: compiled, deleteMissing: false,
                applied: ["User", "Post", "Tag", "Post_tags"], kept: []))
        early.tableEnded("User")
        early.tableEnded("Tag")
        early.tableEnded("Post")
        #expect(try early.results() == ["Post": [DanglingCount(name: "Post.owner", count: 2, policy: .dangling)]])
    }

    @Test func theStoreIsCheckpointedAndItsLogRemovedAfterAnEarlyCount() throws {
        let store = newStore()
        let report = try importText(owners, "p.jsonl", posts, store: store)
        #expect(report.dangling == ["Post.owner": 2])
        // The store's connection closed last: the WAL went into the file.
        #expect(!FileManager.default.fileExists(atPath: store + "-wal"))
        #expect(StoreReader(store).count("Post") == 3)
    }

    @Test func anEntityWaitsForEveryTableItsReferencesReach() throws {
        let store = newStore()
        try importText(owners, "p.jsonl", posts, store: store)
        let compiled = try CompiledMapping(Mapping.parse(yaml: owners))
        let early = try #require(
            EarlyReferenceCounts(
                store: try SQLiteStore(path: store), compiled: compiled, deleteMissing: false,
                applied: ["User", "Post"], kept: []))
        early.tableEnded("Post")
        #expect(try early.results().isEmpty)
    }

    @Test func laterWritesToATargetLeaveTheCountToTheEnd() throws {
        let compiled = try CompiledMapping(Mapping.parse(yaml: owners))
        let store = newStore()
        try importText(owners, "p.jsonl", posts, store: store)
        // Delete-missing may remove targets after the apply.
        #expect(
            EarlyReferenceCounts(
                store: try SQLiteStore(path: store), compiled: compiled, deleteMissing: true, applied: [], kept: [])
                == nil)
        // A link stubs users: the apply of its table may create owners.
        #expect(
            EarlyReferenceCounts(
                store: try SQLiteStore(path: store), compiled: try CompiledMapping(Mapping.parse(yaml: watchers)),
                deleteMissing: false, applied: [], kept: []) == nil)
    }

    @Test func aStubMadeByALaterLinkTableResolvesTheReference() throws {
        let report = try importText(
            watchers, "p.jsonl", "{\"id\": 1, \"owner\": 7, \"watchers\": [7]}\n{\"id\": 2, \"owner\": 8}",
            store: newStore())
        #expect(report.dangling == ["Post.owner": 1])
    }
}
