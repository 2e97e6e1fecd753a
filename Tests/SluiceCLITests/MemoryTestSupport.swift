import Foundation
import SluiceTestSupport

/// Runs `executable` with standard input from `inputPath` under GNU time,
/// which forks it from its own small process; returns the exit status and
/// the child's peak resident set size in KiB. (Spawning it from the test
/// process directly would not do: posix_spawn shares the test process's
/// memory until exec, and Linux carries that high-water mark into the
/// child's ru_maxrss.)
func runMeasured(_ executable: String, _ arguments: [String], inputPath: String) throws -> (status: Int32, peakKiB: Int)
{
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

/// Writes `count` generated events to `path`, as Benchmarks/events.py
/// writes them: shuffled keys, ten scalars, a nested actor, 0–5 tags, about
/// 500 bytes a line.
func writeEvents(_ count: Int, to path: String) throws {
    _ = FileManager.default.createFile(atPath: path, contents: nil)
    let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: path))
    var state: UInt64 = 7
    var chunk = ""
    for index in 0..<count {
        state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
        let id = (index &* 7_919 &+ 13) % count
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
}

/// The mapping of ``writeEvents(_:to:)``'s events (Benchmarks/events.yml's
/// shape): Event, its Actor, its tags as link rows to Tag.
func eventsMapping() -> String {
    TestPaths.file(
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
}
