import Foundation
import SluiceTestSupport
import Testing

/// Examples/Library, the program that embeds the library, built beside the
/// test bundle.
let libraryExample = TestPaths.builtProduct("sluice-library-example")

@Suite struct LibraryExampleTests {
    @Test func theEmbeddingProgramRunsBothDays() throws {
        let directory = TestPaths.temporaryDirectory()
        let result = try runCommand(libraryExample, [directory.path])
        #expect(result.status == 0, "\(result.stderr)")
        let lines = result.stdout.split(separator: "\n").map(String.init)
        #expect(
            lines.first == "day 1: 2000 events inserted; phases: reading, applying, checking, done", "\(result.stdout)")
        #expect(lines.dropFirst().first == "day 2: 1000 inserted, 1000 updated, 0 unchanged", "\(result.stdout)")
        let report = try #require(
            lines.last.flatMap { try JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] })
        #expect(report["records"] as? Int == 2_000)
        #expect(
            (report["tables"] as? [[String: Any]])?.map { $0["name"] as? String } == ["Event", "Tag", "Event_tags"])
        let store = StoreReader(directory.appendingPathComponent("events.sqlite").path)
        #expect(store.count("Event") == 3_000)
        #expect(store.value("SELECT score FROM Event WHERE id = 1500") == "3000")
        #expect(store.value("SELECT status FROM _sluice_runs ORDER BY id DESC LIMIT 1") == "completed")
        #expect(
            store.value("SELECT inputs FROM _sluice_runs ORDER BY id DESC LIMIT 1")?.contains("day2 (download)") == true
        )
    }

    @Test func aUsageErrorExits64() throws {
        let result = try runCommand(libraryExample, [])
        #expect(result.status == 64)
        #expect(result.stderr.contains("usage:"))
    }
}
