import Foundation
import Sluice

/// A program that embeds sluice as a library: it keeps a store of events in
/// step with a day's file, watching the import's progress as an
/// `AsyncSequence`, then applies a second day that arrives in pieces (as a
/// download would), and prints the report as JSON.
///
///     swift run sluice-library-example DIRECTORY
@main
struct LibraryExample {
    static let mapping = """
        entities:
          Event:
            records: $
            key: id
            attributes: {id: integer, type: string, score: integer}
            relationships:
              tags: {entity: Tag, source: "tags[*]", many: true, missing: stub}
          Tag:
            key: name
            attributes: {name: string}
        """

    /// Events `first..<last` as JSON Lines; day 2 changes the score of the
    /// events it shares with day 1.
    static func events(_ numbers: Range<Int>, day: Int) -> String {
        numbers.map { number in
            #"{"id": \#(number), "type": "\#(number % 2 == 0 ? "push" : "issue")", "score": \#(number * day), "tags": ["t\#(number % 3)"]}"#
        }.joined(separator: "\n") + "\n"
    }

    static func main() async throws {
        guard CommandLine.arguments.count == 2 else {
            FileHandle.standardError.write(Data("usage: sluice-library-example DIRECTORY\n".utf8))
            exit(64)
        }
        let directory = URL(fileURLWithPath: CommandLine.arguments[1], isDirectory: true)
        let importer = try Importer(
            mapping: try Mapping.parse(yaml: mapping), store: directory.appendingPathComponent("events.sqlite"))

        // Day 1: a file, its progress as an AsyncSequence of events.
        let day1 = directory.appendingPathComponent("day1.jsonl")
        try events(0..<2_000, day: 1).write(to: day1, atomically: true, encoding: .utf8)
        var phases: [ImportProgress.Phase] = []
        for try await event in try importer.events(inputs: [day1]) {
            switch event {
            case .progress(let progress):
                if phases.last != progress.phase { phases.append(progress.phase) }
            case .finished(let report):
                print(
                    "day 1: \(report[entity: "Event"]?.inserted ?? 0) events inserted; phases: \(phases.map(\.rawValue).joined(separator: ", "))"
                )
            }
        }

        // Day 2: bytes that arrive in pieces, fed from async code.
        let (pieces, feed) = AsyncStream.makeStream(of: [UInt8].self)
        let bytes = Array(events(1_000..<3_000, day: 2).utf8)
        Task {
            for start in stride(from: 0, to: bytes.count, by: 10_000) {
                feed.yield(Array(bytes[start..<min(bytes.count, start + 10_000)]))
            }
            feed.finish()
        }
        let report = try await importer.run(name: "day2 (download)", format: .jsonl, chunks: pieces)
        let counts = report[entity: "Event"] ?? EntityCounts()
        print("day 2: \(counts.inserted) inserted, \(counts.updated) updated, \(counts.unchanged) unchanged")

        // The report is Codable.
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        print(String(decoding: try encoder.encode(report), as: UTF8.self))
    }
}
