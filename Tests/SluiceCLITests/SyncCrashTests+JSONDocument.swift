import Foundation
import SluiceTestSupport
import Testing

/// Kills of runs over one JSON document that skip the elements of its
/// record path's array whose digests the store kept.
extension SyncCrashTests {
    /// The sync mapping with its events the elements of a document's
    /// `events` array.
    static let documentMapping = TestPaths.file(
        "sync-document.yml", TestMappings.sync.replacingOccurrences(of: "records: $\n", with: "records: $.events[*]\n"))

    /// ``events(_:name:)`` as the `events` array of one JSON document, one
    /// element a line, between other members.
    static func document(_ ids: [Int], name: String) throws -> String {
        let lines = try String(contentsOfFile: events(ids, name: name + ".jsonl"), encoding: .utf8)
            .split(separator: "\n")
        return TestPaths.file(
            name, #"{"source": "sync", "events": ["# + "\n" + lines.joined(separator: ",\n") + "\n]}\n")
    }

    /// A next day over one JSON document with `--delete-missing`, killed
    /// once the removed units' keys are recorded (before it parses its
    /// changed elements, every byte between the others checked), then
    /// resumed or run afresh, ends where an uninterrupted run does, and the
    /// run after a fresh one skips again.
    @Test(arguments: RecordDigestTests.kinds)
    func aKilledRunOverOneJSONDocumentEndsWhereAnUninterruptedRunDoes(kind: RecordDigestTests.Kind) throws {
        let night = KilledNight(
            mapping: Self.documentMapping, days: [try Self.document(Array(1...30_000), name: "day0.json")],
            covered: ("SELECT entity FROM _sluice_digest_covered", [["Event"]]), options: ["--delete-missing"],
            next: try Self.document((1...30_000).filter { $0 % 10 != 0 }, name: "most.json"), unchanged: 27_000,
            attempts: 8, phase: "once the removed keys were recorded"
        ) { sync, store, attempt in
            let removed = "SELECT count(*) FROM \"_sluice_removed_Event\""
            let wasKilled = try killed(sync, into: store, once: removed)
            let recorded = Self.number(store, removed)
            if wasKilled && recorded > 0 { #expect(recorded == 3_000, "attempt \(attempt): \(recorded) removed") }
            return (wasKilled && recorded > 0, "\(recorded) keys recorded")
        }
        try endsWhereAnUninterruptedRunDoes(night, kind)
    }
}
