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
        let (wiki, _) = try Inferrer.infer(
            path: TestPaths.corpus("mediawiki/enwiki-latest-pages-articles1.xml-p000000010p000030302-shortened.bz2"))
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
