import Foundation
import SluiceTestSupport
import Testing

@Suite struct MemoryBoundTests {
    /// A generated events workload (as Benchmarks/events.py writes it:
    /// shuffled keys, ten scalars, a nested actor, 0–5 tags), 150,000
    /// records (~75 MB), piped through standard input.
    @Test func importThroughStdinStaysUnderTheMemoryCap() throws {
        let directory = TestPaths.temporaryDirectory()
        let input = directory.appendingPathComponent("events.jsonl").path
        _ = FileManager.default.createFile(atPath: input, contents: nil)
        let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: input))
        var state: UInt64 = 7
        var chunk = ""
        for index in 0..<150_000 {
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            let id = (index &* 7_919 &+ 13) % 150_000
            let actor = Int(state >> 40) % 7_500
            let tags = (0..<Int(state >> 61)).map { "\"t\(($0 &+ index) % 40)\"" }.joined(separator: ",")
            chunk +=
                #"{"id": \#(id), "type": "PushEvent", "created_at": "2024-05-01T12:34:56Z", "public": true, "score": \#(index % 1000), "ratio": 0.5, "repo": "owner/repo-\#(index % 500)", "lang": "swift", "title": "commit fix merge update \#(index)", "body": "\#(String(repeating: "body text ", count: 30))", "actor": {"id": \#(actor), "login": "user\#(actor)", "url": "https://example.org/u/\#(actor)"}, "tags": [\#(tags)]}"#
                + "\n"
            if chunk.utf8.count > 1 << 20 {
                handle.write(Data(chunk.utf8))
                chunk = ""
            }
        }
        handle.write(Data(chunk.utf8))
        try handle.close()
        let mapping = TestPaths.file(
            "events.yml",
            """
            entities:
              Event:
                records: $
                key: id
                attributes: {id: integer, type: string, created_at: date, public: boolean, score: integer, ratio: double,
                             repo: string, lang: string, title: string, body: string}
                relationships:
                  actor: {entity: Actor, source: actor}
                  tags: {entity: Tag, source: "tags[*]", many: true, missing: stub}
              Actor: {key: id, attributes: {id: integer, login: string, url: string}}
              Tag: {key: name, attributes: {name: string}}
            """)
        let store = directory.appendingPathComponent("events.sqlite").path
        let (status, peakKiB) = try runMeasured(
            sluice, ["import", "--mapping", mapping, "--into", store, "--format", "jsonl", "-"], inputPath: input)
        #expect(status == 0)
        #expect(StoreReader(store).count("Event") == 150_000)
        #expect(peakKiB > 0 && peakKiB < 64 * 1024, "peak RSS \(peakKiB) KiB")
        print("memory bound: 150,000 records through stdin, peak RSS \(peakKiB) KiB")
    }
}
