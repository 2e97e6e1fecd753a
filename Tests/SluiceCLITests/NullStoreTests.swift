import Foundation
import SluiceTestSupport
import Testing

/// `--into null:` runs everything but the store.
@Suite struct NullStoreTests {
    @Test func theNullStoreCountsEveryRowAndKeepsNothing() throws {
        let directory = TestPaths.temporaryDirectory()
        let mapping = directory.appendingPathComponent("m.yml").path
        try ReportingTests.mapping.write(toFile: mapping, atomically: true, encoding: .utf8)
        let input = directory.appendingPathComponent("events.jsonl").path
        try ReportingTests.events(2_000).write(toFile: input, atomically: true, encoding: .utf8)
        let stats = directory.appendingPathComponent("stats.json").path
        let result = try runCommand(
            sluice, ["import", "--mapping", mapping, "--into", "null:", "--stats-json", stats, input])
        #expect(result.status == 0, "\(result.stderr)")
        let json =
            try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: stats))) as? [String: Any]
        let event = (json?["entities"] as? [String: Any])?["Event"] as? [String: Any]
        #expect(event?["inserted"] as? Int == 2_000)
        // Nested actors are found or created once per batch, so the null
        // store sees each actor once per batch, never more.
        let actor = (json?["entities"] as? [String: Any])?["Actor"] as? [String: Any]
        #expect((actor?["inserted"] as? Int ?? 0) >= 50)
        #expect(!FileManager.default.fileExists(atPath: "null:"))
        #expect(!FileManager.default.fileExists(atPath: directory.appendingPathComponent("null:").path))
    }
}
