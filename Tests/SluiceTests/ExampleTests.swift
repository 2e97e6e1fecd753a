import Sluice
import SluiceTestSupport
import Testing

@Suite(.serialized) struct ExampleTests {
    @Test func openStreetMapWithTagsNodeListsAndMembers() throws {
        let (report, store) = try importExample("osm", ["osm/liechtenstein-2013-08-03.osm.bz2"], format: .xml)
        #expect(report[entity: "Node"]?.inserted == 65_733)
        #expect(report[entity: "Way"]?.inserted == 7_121)
        #expect(report[entity: "Relation"]?.inserted == 113)
        #expect(store.count("Way_nodes") == 74_163)
        #expect(report.dangling["Way_nodes"] == nil)
        // Members outside the extract dangle (6,583 of 8,624, counted independently with Python's ElementTree).
        #expect(
            store.rows("SELECT target_entity, count(*) FROM Relation_members GROUP BY 1 ORDER BY 1")
                == [["node", "845"], ["relation", "275"], ["way", "7504"]])
        #expect(report.dangling["Relation_members"] == 6_583)
        #expect(store.value("SELECT count(*) FROM Relation_members WHERE role = 'outer'") == "2244")
        let tags = ["Node", "Way", "Relation"].map {
            Int(store.value("SELECT sum((SELECT count(*) FROM json_each(tags))) FROM \($0)") ?? "") ?? 0
        }
        #expect(tags.reduce(0, +) == 19_393)
        #expect(store.value("SELECT typeof(Node_id) FROM Way_nodes LIMIT 1") == "integer")
    }

    @Test func openStreetMapAPIResponse() throws {
        let (report, store) = try importExample("osm", ["osm/winthrop.osm"])
        #expect(report[entity: "Node"]?.inserted == 1_525)
        #expect(report[entity: "Way"]?.inserted == 98)
        #expect(report[entity: "Relation"]?.inserted == 2)
        #expect(store.count("Way_nodes") == 1_634)
        #expect(store.value("SELECT count(*) FROM Node WHERE visible = 1") == "1525")
    }

    @Test func mediaWikiPagesWithRevisionAndContributor() throws {
        let (report, store) = try importExample(
            "mediawiki", ["mediawiki/enwiki-latest-pages-articles1.xml-p000000010p000030302-shortened.bz2"],
            format: .xml)
        #expect(report[entity: "Page"]?.inserted == 206)
        #expect(store.value("SELECT count(*) FROM Page WHERE redirect IS NOT NULL") == "100")
        #expect(store.value("SELECT count(*) FROM Page WHERE contributor_ip IS NOT NULL") == "15")
        #expect(store.value("SELECT count(*) FROM Page WHERE contributor_name IS NOT NULL") == "191")
        #expect(store.value("SELECT count(*) FROM Page WHERE comment IS NOT NULL") == "188")
        #expect(store.value("SELECT sum(length(text)) > 5000000 FROM Page") == "1")
    }

    @Test func mediaWikiUTF16AndTableMarkupDumps() throws {
        let (report, store) = try importExample(
            "mediawiki",
            [
                "mediawiki/bgwiki-latest-pages-articles-shortened.xml.bz2", "mediawiki/enwiki-table-markup.xml.bz2",
            ], format: .xml)
        #expect(report[entity: "Page"]?.inserted == 3 + 5)
        #expect(store.value("SELECT count(*) FROM Page WHERE title GLOB '*[А-я]*'") == "3")
    }

    @Test func mediaWikiSmallExport() throws {
        let (report, store) = try importExample("mediawiki", ["mediawiki/dump.xml"])
        #expect(report[entity: "Page"]?.inserted == 2)
        #expect(store.value("SELECT count(*) FROM Page WHERE revision_id IS NOT NULL") == "2")
    }

    @Test func overpassElementsByTypeAndId() throws {
        let (report, store) = try importExample("overpass", ["json/overpass-response-2.json.gz"], format: .json)
        #expect(report[entity: "Element"]?.inserted == 8_237 + 618 + 2)
        #expect(
            store.rows("SELECT type, count(*) FROM Element GROUP BY type ORDER BY type")
                == [["node", "8237"], ["relation", "2"], ["way", "618"]])
        #expect(
            store.value("SELECT count(*) FROM Element WHERE type = 'way' AND json_array_length(nodes) > 1") == "618")
        #expect(store.value("SELECT max(id) > 2147483647 FROM Element") == "1")
        let (smaller, _) = try importExample("overpass", ["json/overpass-response-3.json.gz"], format: .json)
        #expect(smaller[entity: "Element"]?.inserted == 1_941 + 534)
    }

    @Test func jenkinsJobsUnderANestedArray() throws {
        let (report, store) = try importExample("jenkins", ["json/apache_builds.json"])
        #expect(report[entity: "Job"]?.inserted == 875)
        #expect(store.count("Job") == 875)
    }
}
