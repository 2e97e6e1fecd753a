import Foundation
import SluiceTestSupport
import Testing


/// Runs `executable` with standard input from `inputPath` under GNU time,
/// which forks it from its own small process; returns the exit status and
/// the child's peak resident set size in KiB. (Spawning it from the test
/// process directly would not do: posix_spawn shares the test process's
/// memory until exec, and Linux carries that high-water mark into the
/// child's ru_maxrss.)
func runMeasured(_ executable: String, _ arguments: [String], inputPath: String) throws -> (status: Int32, peakKiB: Int) {
    let report = TestPaths.temporaryDirectory().appendingPathComponent("time.txt").path
    let process = Process()
    process.executableURL = URL(fileURLWithPath: "/usr/bin/time")
    process.arguments = ["-f", "%M", "-o", report, executable] + arguments
    process.standardInput = try FileHandle(forReadingFrom: URL(fileURLWithPath: inputPath))
    process.standardOutput = FileHandle.nullDevice
    try process.run()
    process.waitUntilExit()
    let text = (try? String(contentsOfFile: report, encoding: .utf8)) ?? ""
    let peak = text.split(separator: "\n").compactMap { Int($0.trimmingCharacters(in: .whitespaces)) }.last ?? 0
    return (process.terminationStatus, peak)
}

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
            state = state &* 6364136223846793005 &+ 1442695040888963407
            let id = (index &* 7_919 &+ 13) % 150_000
            let actor = Int(state >> 40) % 7_500
            let tags = (0..<Int(state >> 61)).map { "\"t\(($0 &+ index) % 40)\"" }.joined(separator: ",")
            chunk += #"{"id": \#(id), "type": "PushEvent", "created_at": "2024-05-01T12:34:56Z", "public": true, "score": \#(index % 1000), "ratio": 0.5, "repo": "owner/repo-\#(index % 500)", "lang": "swift", "title": "commit fix merge update \#(index)", "body": "\#(String(repeating: "body text ", count: 30))", "actor": {"id": \#(actor), "login": "user\#(actor)", "url": "https://example.org/u/\#(actor)"}, "tags": [\#(tags)]}"# + "\n"
            if chunk.utf8.count > 1 << 20 {
                handle.write(Data(chunk.utf8))
                chunk = ""
            }
        }
        handle.write(Data(chunk.utf8))
        try handle.close()
        let mapping = TestPaths.file("events.yml", """
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
        let (status, peakKiB) = try runMeasured(sluice, ["import", "--mapping", mapping, "--into", store, "--format", "jsonl", "-"], inputPath: input)
        #expect(status == 0)
        #expect(StoreReader(store).count("Event") == 150_000)
        #expect(peakKiB > 0 && peakKiB < 64 * 1024, "peak RSS \(peakKiB) KiB")
        print("memory bound: 150,000 records through stdin, peak RSS \(peakKiB) KiB")
    }
}

@Suite struct LargeRecordMemoryTests {
    /// Records of three 1 MiB fields in key order: the sort's merge held
    /// the current row of every run (one run per record past the budget),
    /// so peak RSS grew with the number of large records (24 records of
    /// three 5 MiB fields: 848 MB; here, before the fix, 16 records 90 MB
    /// and 64 records 191 MB). From 16 records to 64 it may grow by less
    /// than a dozen of them (allocator slack), not by one per record.
    @Test func peakMemoryDoesNotGrowWithTheNumberOfLargeRecords() throws {
        func peak(records: Int) throws -> Int {
            let directory = TestPaths.temporaryDirectory()
            let input = directory.appendingPathComponent("large.jsonl").path
            let field = String(repeating: "x", count: 1 << 20)
            let lines = (0..<records).map { #"{"id": \#(($0 * 7) % records), "a": "a\#(field)", "b": "b\#(field)", "c": "c\#(field)"}"# }
            try (lines.joined(separator: "\n") + "\n").write(toFile: input, atomically: true, encoding: .utf8)
            let store = directory.appendingPathComponent("large.sqlite").path
            let (status, peakKiB) = try runMeasured(
                sluice, ["import", "--into", store, "--entity", "E", "--key", "id", "--order", "key", "--format", "jsonl", "-"],
                inputPath: input)
            #expect(status == 0)
            #expect(StoreReader(store).count("E") == records)
            return peakKiB
        }
        let few = try peak(records: 16), many = try peak(records: 64)
        print("large records: 16 records peak \(few) KiB, 64 records peak \(many) KiB")
        #expect(many < few + 36 * 1024, "16 records: \(few) KiB, 64 records: \(many) KiB")
    }
}
