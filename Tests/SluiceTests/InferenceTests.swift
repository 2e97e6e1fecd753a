import Foundation
import Sluice
import SluiceTestSupport
import Testing

/// Every corpus the examples cover, with the records its inferred mapping
/// must import (nil: the file's own structure decides, the import must just succeed).
let inferenceCorpora: [(file: String, records: Int?)] = [
    ("stackexchange/french.meta/Posts.xml", 781), ("stackexchange/french.meta/Users.xml", 1_703),
    ("stackexchange/french.meta/Comments.xml", 1_305), ("stackexchange/french.meta/Votes.xml", 4_349),
    ("stackexchange/french.meta/Badges.xml", 4_002), ("stackexchange/french.meta/Tags.xml", 94),
    ("stackexchange/french.meta/PostLinks.xml", 134), ("stackexchange/french.meta/PostHistory.xml", 2_881),
    ("stackexchange/beer/Posts.xml", 2_354),
    ("osm/winthrop.osm", 1_525 + 98 + 2), ("osm/West-Oakland.osm.bz2", 446 + 66 + 23),
    ("osm/planet_10.068,48.135_10.071,48.137.osm", 281 + 56 + 3),
    ("osm/liechtenstein-2013-08-03.osm.bz2", 65_733 + 7_121 + 113),
    ("osm/000466354.osc.gz", nil), ("osm/008-ch.osc.gz", nil),
    ("mediawiki/enwiki-latest-pages-articles1.xml-p000000010p000030302-shortened.bz2", 206),
    ("mediawiki/bgwiki-latest-pages-articles-shortened.xml.bz2", 3), ("mediawiki/enwiki-table-markup.xml.bz2", 5),
    ("mediawiki/dump.xml", 2),
    ("json/2015-01-01-12.json.gz", 8_273), ("json/github_events.json", 30), ("json/apache_builds.json", 875),
    ("json/overpass-response-2.json.gz", 8_857), ("json/overpass-response-3.json.gz", 2_475),
]

@Suite(.serialized) struct InferenceTests {
    @Test(arguments: inferenceCorpora.map(\.file))
    func inferredMappingImportsItsCorpusUnedited(file: String) throws {
        let path = TestPaths.corpus(file)
        let (mapping, _) = try Inferrer.infer(path: path)
        // Through YAML and back, as a user would use it.
        let reparsed = try Mapping.parse(yaml: mapping.yaml(comment: "test"), file: "inferred.yml")
        #expect(reparsed.entities.map(\.name) == mapping.entities.map(\.name))
        #expect(!reparsed.entities.isEmpty)
        let store = TestPaths.temporaryDirectory().appendingPathComponent("inferred.sqlite").path
        let report = try Importer(mapping: reparsed, store: store).runBlocking(inputs: [path])
        let rows = report.entities.reduce(0) { $0 + $1.counts.inserted }
        if let expected = inferenceCorpora.first(where: { $0.file == file })?.records {
            #expect(report.records == expected, "\(file)")
            #expect(rows == expected, "\(file): keys must be unique")
        } else {
            #expect(report.records > 0)
        }
    }

    @Test func proposalsGuessTypesKeysAndPaths() throws {
        let (posts, _) = try Inferrer.infer(path: TestPaths.corpus("stackexchange/french.meta/Posts.xml"))
        let post = try #require(posts.entities.first)
        #expect(post.name == "Post" && post.records == ["/posts/row"] && post.key == ["Id"])
        let types = Dictionary(uniqueKeysWithValues: post.attributes.map { ($0.name, $0.type) })
        #expect(types["Id"] == .integer && types["CreationDate"] == .date && types["Body"] == .string)
        let (wiki, _) = try Inferrer.infer(path: TestPaths.corpus("mediawiki/enwiki-latest-pages-articles1.xml-p000000010p000030302-shortened.bz2"))
        let page = try #require(wiki.entities.first)
        #expect(page.key == ["id"])
        #expect(page.attributes.contains { $0.sources == ["revision/contributor/username"] })
        let (events, _) = try Inferrer.infer(path: TestPaths.corpus("json/2015-01-01-12.json.gz"))
        let event = try #require(events.entities.first)
        #expect(event.records == ["$"] && event.key == ["id"])
        #expect(event.attributes.contains { $0.name == "actor_login" && $0.sources == ["actor.login"] })
        #expect(event.attributes.contains { $0.name == "payload" && $0.type == .json })
    }
}

/// Zero-config tables that grow wide (issue 17): one new member per record
/// copied every row per member (1,600 members 4.9 s, cubic), the write
/// statements' column sets aliased past 256 columns, 2,000 columns failed
/// inside SQLite, and members differing in case failed as a store error or
/// were dropped.
@Suite struct WideZeroConfigTests {
    func importing(_ lines: [String], into store: String, order: ApplyOrder) throws -> ImportReport {
        var options = ImportOptions()
        options.order = order
        return try Importer(entity: "E", key: "id", store: store, options: options)
            .runBlocking(inputs: [TestPaths.file("wide.jsonl", lines.joined(separator: "\n") + "\n")])
    }

    @Test(arguments: [ApplyOrder.key, .input]) func sparseMembersPast256ColumnsLandInTheirColumns(order: ApplyOrder) throws {
        let store = newStore()
        // Record i has members m(i) and m(i + 64): masks that differ only past column 256 stay apart.
        let lines = (0..<600).map { #"{"id": \#($0), "m\#($0)": \#($0), "m\#($0 + 64)": "s\#($0)"}"# }
        let first = try importing(lines, into: store, order: order)
        #expect(first[entity: "E"]?.inserted == 600)
        let reader = StoreReader(store)
        for id in [0, 200, 300, 450, 599] {
            #expect(reader.rows("SELECT m\(id), m\(id + 64) FROM E WHERE id = \(id)") == [["\(id)", "s\(id)"]], "m\(id)")
            #expect(reader.value("SELECT count(*) FROM E WHERE m\(id) IS NOT NULL") == (id < 64 ? "1" : "2"), "m\(id)")
        }
        let again = try importing(lines, into: store, order: order)
        #expect(again[entity: "E"]?.unchanged == 600 && again[entity: "E"]?.updated == 0)
    }

    @Test func pastSQLitesColumnLimitTheMemberIsNamed() throws {
        let lines = (0..<2_100).map { #"{"id": \#($0), "m\#($0)": 1}"# }
        #expect {
            try importing(lines, into: newStore(), order: .key)
        } throws: { error in
            "\(error)".contains("attribute m1999: the member would be column 2001, past SQLite's limit of 2000 columns")
        }
    }

    @Test(arguments: [[#"{"id": 1, "a": 1}"#, #"{"id": 2, "A": 2}"#], [#"{"id": 1, "ID": 7}"#]])
    func membersDifferingOnlyInCaseAreAnInputError(lines: [String]) throws {
        #expect {
            try importing(lines, into: newStore(), order: .key)
        } throws: { error in
            guard case .parse = error as? ImportError else { return false }
            return "\(error)".contains("differ only in letter case")
        }
    }
}
