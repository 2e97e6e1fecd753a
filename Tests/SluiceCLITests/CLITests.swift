import Foundation
import SluiceTestSupport
import Testing

@Suite struct CLITests {
    let mapping = TestPaths.repository.appendingPathComponent("Examples/stackexchange/mapping.yml").path

    @Test func importPrintsCountsAndWritesStats() throws {
        let dir = TestPaths.temporaryDirectory()
        let stats = dir.appendingPathComponent("stats.json").path
        let result = try runCommand(
            sluice,
            [
                "import", "--mapping", mapping, "--into", dir.appendingPathComponent("s.sqlite").path,
                "--stats-json", stats, TestPaths.corpus("stackexchange/french.meta/Tags.xml"),
            ])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdout.contains("Tag"))
        let json =
            try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: stats))) as? [String: Any]
        #expect(json?["records"] as? Int == 94)
        let tag = (json?["entities"] as? [String: Any])?["Tag"] as? [String: Int]
        #expect(tag == ["inserted": 94, "updated": 0, "unchanged": 0, "deleted": 0, "skipped": 0])
    }

    @Test func schemalessImportFromStdin() throws {
        let dir = TestPaths.temporaryDirectory()
        let result = try runCommand(
            sluice,
            [
                "import", "--into", dir.appendingPathComponent("s.sqlite").path,
                "--entity", "Item", "--key", "id", "-",
            ],
            input: Data("{\"id\": 1}\n{\"id\": 2, \"x\": \"y\"}\n".utf8))
        #expect(result.status == 0, "\(result.stderr)")
        #expect(StoreReader(dir.appendingPathComponent("s.sqlite").path).count("Item") == 2)
    }

    @Test func exitCodesSayWhatFailed() throws {
        let dir = TestPaths.temporaryDirectory()
        let store = dir.appendingPathComponent("s.sqlite").path
        // 64: usage
        #expect(try runCommand(sluice, ["import", "--into", store, "x.xml"]).status == 64)
        #expect(
            try runCommand(sluice, ["import", "--mapping", mapping, "--page-size", "3000", "--into", store, "x.xml"])
                .status == 64)
        // 66: input not found
        let missing = try runCommand(
            sluice, ["import", "--mapping", mapping, "--into", store, "/nonexistent/Posts.xml"])
        #expect(missing.status == 66)
        #expect(missing.stderr.contains("/nonexistent/Posts.xml"))
        // 65: bad input, with file, line:column and record
        let bad = TestPaths.file(
            "Tags.xml", "<tags>\n<row Id=\"1\" TagName=\"a\"/>\n<row Id=\"2\" TagName=\"b\">\n</tags>\n")
        let malformed = try runCommand(sluice, ["import", "--mapping", mapping, "--into", store, bad])
        #expect(malformed.status == 65)
        #expect(malformed.stderr.contains("\(bad):4:"))
        #expect(malformed.stderr.contains("record 2"))
        // 78: bad mapping, with the line
        let badMapping = TestPaths.file(
            "m.yml", "entities:\n  A:\n    records: /a/b\n    key: id\n    attributes:\n      id: number\n")
        let config = try runCommand(sluice, ["import", "--mapping", badMapping, "--into", store, bad])
        #expect(config.status == 78)
        #expect(config.stderr.contains("m.yml:6:"))
        // 74: the store cannot be opened (here, --into names a directory);
        // a store in a directory that does not exist is a usage error,
        // found before reading (EarlyCheckTests).
        let unwritable = try runCommand(
            sluice, ["import", "--mapping", mapping, "--into", TestPaths.temporaryDirectory().path, bad])
        #expect(unwritable.status == 74)
    }

    @Test func checkReportsWellFormedAndMalformedInput() throws {
        let good = try runCommand(sluice, ["check", TestPaths.corpus("json/apache_builds.json")])
        #expect(good.status == 0)
        let broken = TestPaths.file("broken.jsonl", "{\"a\": 1}\n{\"a\": }\n")
        let bad = try runCommand(sluice, ["check", broken])
        #expect(bad.status == 65)
        #expect(bad.stderr.contains("\(broken):2:"))
        let xml = try runCommand(sluice, ["check", "--format", "xml", TestPaths.corpus("osm/West-Oakland.osm.bz2")])
        #expect(xml.status == 0, "\(xml.stderr)")
    }

    /// Every input is checked and reported, good or bad; the exit code is
    /// the first failure's.
    @Test func checkReportsEveryInput() throws {
        let good = TestPaths.corpus("json/apache_builds.json")
        let broken = TestPaths.file("broken.jsonl", "{\"a\": 1}\n{\"a\": }\n")
        let missing = TestPaths.temporaryDirectory().appendingPathComponent("gone.xml").path
        let result = try runCommand(sluice, ["check", broken, good, missing, TestPaths.corpus("osm/winthrop.osm")])
        #expect(result.status == 65)
        #expect(result.stdout.split(separator: "\n").count == 2, "\(result.stdout)")
        #expect(result.stdout.contains("\(good): well-formed") && result.stdout.contains("winthrop.osm: well-formed"))
        #expect(
            result.stderr.contains("\(broken):2:") && result.stderr.contains("\(missing): no such file"),
            "\(result.stderr)")
    }
}
