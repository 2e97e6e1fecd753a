import Foundation
import Sluice
import SluiceTestSupport
import Testing

let entityOf = [
    "Posts": "Post", "Users": "User", "Comments": "Comment", "Votes": "Vote", "Badges": "Badge",
    "Tags": "Tag", "PostLinks": "PostLink", "PostHistory": "PostHistory",
]

@Suite(.serialized) struct StackExchangeTests {
    @Test func importsEveryRowThenNothingChangesThenOneUpdate() throws {
        let store = TestPaths.temporaryDirectory().appendingPathComponent("se.sqlite").path
        let importer = try Importer(mapping: example("stackexchange"), store: store)
        let first = try importer.runBlocking(inputs: stackExchangeFiles())
        let reader = StoreReader(store)
        for file in stackExchange {
            let rows = countOccurrences(
                of: "<row ", inFile: "\(TestPaths.corpus("stackexchange/french.meta"))/\(file).xml")
            let entity = entityOf[file]!
            #expect(rows > 0)
            #expect(first[entity: entity]?.inserted == rows, "\(entity)")
            #expect(reader.count(entity) == rows, "\(entity)")
        }
        #expect(first.records == 15_249)
        // Every post owner, comment author and linked post resolves; votes on
        // 119 deleted posts and 6 post links to deleted posts do not.
        #expect(first.dangling == ["Vote.PostId": 119, "PostLink.PostId": 6])
        #expect(reader.value("SELECT count(*) FROM Post p JOIN User u ON u.Id = p.OwnerUserId") == "748")
        #expect(reader.value("SELECT Id FROM User ORDER BY Id LIMIT 1") == "-1")
        #expect(reader.value("SELECT Text FROM Comment WHERE Id = 1")?.hasPrefix("The problem in EL&U is") == true)

        // The same files again: not even parsed (record digests).
        let second = try importer.runBlocking(inputs: stackExchangeFiles())
        for (name, counts) in second.entities.map({ ($0.name, $0.counts) }) {
            #expect(counts.inserted == 0 && counts.updated == 0, "\(name)")
        }
        #expect(second.unchangedRecords == first.records)

        // Change one attribute of one row in a copy of Tags.xml.
        let copy = TestPaths.temporaryDirectory().appendingPathComponent("Tags.xml")
        let original = try String(
            contentsOfFile: TestPaths.corpus("stackexchange/french.meta/Tags.xml"), encoding: .utf8)
        let changed = original.replacingOccurrences(
            of: #"TagName="bug" Count="11""#, with: #"TagName="bug" Count="12""#)
        #expect(changed != original)
        try changed.write(to: copy, atomically: true, encoding: .utf8)
        let third = try importer.runBlocking(inputs: [copy.path])
        #expect(third[entity: "Tag"]?.updated == 1)
        #expect(third.unchangedRecords == 93)
        #expect(reader.value("SELECT Count FROM Tag WHERE TagName = 'bug'") == "12")
    }

    @Test func oneByteChunksGiveTheSameStore() throws {
        let files = ["Tags", "PostLinks", "Badges"].map { TestPaths.corpus("stackexchange/french.meta/\($0).xml") }
        var stores: [String] = []
        for chunk in [1, 65_536] {
            var options = ImportOptions()
            options.chunkSize = chunk
            options.batch.maxRows = 500
            let store = TestPaths.temporaryDirectory().appendingPathComponent("c\(chunk).sqlite").path
            let report = try Importer(mapping: example("stackexchange"), store: store, options: options).runBlocking(
                inputs: files)
            #expect(report.records == 94 + 134 + 4_002)
            stores.append(store)
        }
        for table in ["Tag", "PostLink", "Badge"] {
            let sql = "SELECT * FROM \(table) ORDER BY Id"
            #expect(StoreReader(stores[0]).rows(sql) == StoreReader(stores[1]).rows(sql))
        }
    }

    @Test func olderDumpWithFewerAttributesImports() throws {
        let store = TestPaths.temporaryDirectory().appendingPathComponent("beer.sqlite").path
        let report = try Importer(mapping: example("stackexchange"), store: store)
            .runBlocking(inputs: [TestPaths.corpus("stackexchange/beer/Posts.xml")])
        #expect(
            report[entity: "Post"]?.inserted
                == countOccurrences(of: "<row ", inFile: TestPaths.corpus("stackexchange/beer/Posts.xml")))
        #expect(StoreReader(store).value("SELECT count(*) FROM Post WHERE ContentLicense IS NOT NULL") == "0")
    }
}
