import Foundation
import Sluice
import SluiceTestSupport
import Testing

@Suite(.serialized) struct GHArchiveTests {
    @Test func oneEventPerLine() throws {
        let lines = try gharchiveLines()
        let lineCount = countOccurrences(of: "\n", inFile: lines)
        #expect(lineCount == 8_273)
        let store = TestPaths.temporaryDirectory().appendingPathComponent("gh.sqlite").path
        let report = try Importer(mapping: example("gharchive"), store: store).runBlocking(inputs: [lines])
        #expect(report[entity: "Event"]?.inserted == lineCount)
        let reader = StoreReader(store)
        #expect(reader.count("Event") == lineCount)
        #expect(
            reader.rows(
                """
                SELECT e.id, e.type, a.login, r.name, e.created_at FROM Event e
                JOIN Actor a ON a.id = e.actor JOIN Repo r ON r.id = e.repo WHERE e.id = '2489582589'
                """) == [
                    ["2489582589", "WatchEvent", "kevinvanhove", "kevinvanhove/cssobjects", "2015-01-01 12:00:01"]
                ])
        #expect(reader.value("SELECT count(*) FROM Event WHERE org IS NOT NULL") == "2238")
        // Actors, repositories and organisations are created once each.
        #expect(reader.count("Actor") == Int(reader.value("SELECT count(DISTINCT actor) FROM Event") ?? ""))
        #expect(reader.count("Repo") == Int(reader.value("SELECT count(DISTINCT repo) FROM Event") ?? ""))
        #expect(reader.count("Org") == Int(reader.value("SELECT count(DISTINCT org) FROM Event") ?? ""))
        #expect(report.dangling.isEmpty)
    }

    @Test func compressedInputGivesTheSameRows() throws {
        let plain = TestPaths.temporaryDirectory().appendingPathComponent("p.sqlite").path
        let packed = TestPaths.temporaryDirectory().appendingPathComponent("z.sqlite").path
        _ = try Importer(mapping: example("gharchive"), store: plain).runBlocking(inputs: [gharchiveLines()])
        _ = try Importer(mapping: example("gharchive"), store: packed).runBlocking(inputs: [
            TestPaths.corpus("json/2015-01-01-12.json.gz")
        ])
        let sql = "SELECT * FROM Event ORDER BY id"
        #expect(StoreReader(plain).rows(sql) == StoreReader(packed).rows(sql))
    }
}
