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
        let mapping = Self.documentMapping
        let directory = TestPaths.temporaryDirectory()
        let day0 = try Self.document(Array(1...30_000), name: "day0.json")
        let most = try Self.document((1...30_000).filter { $0 % 10 != 0 }, name: "most.json")
        let base = try newStore(kind, directory, "base")
        #expect(try runCommand(sluice, ["import", "--mapping", mapping, "--into", base, day0]).status == 0)
        #expect(Self.rows(base, "SELECT entity FROM _sluice_digest_covered") == [["Event"]])
        let reference = try copy(of: base, directory, "reference")
        let sync = ["import", "--mapping", mapping, "--delete-missing", most]
        let stats = directory.appendingPathComponent("stats.json").path
        func skipped() throws -> String { try String(contentsOfFile: stats, encoding: .utf8) }
        let clean = try runCommand(sluice, sync + ["--into", reference, "--stats-json", stats])
        #expect(clean.status == 0, "\(clean.stderr)")
        #expect(try skipped().contains(#""unchangedRecords": 27000"#))
        let expected = dump(reference)
        #expect(expected[0].count == 27_000)

        var landed: Set<Bool> = []
        for attempt in 0..<8 where landed.count < 2 {
            let resume = attempt % 2 == 0
            let store = try copy(of: base, directory, "crash\(attempt)")
            let removed = "SELECT count(*) FROM \"_sluice_removed_Event\""
            let wasKilled = try killed(sync, into: store, once: removed)
            let recorded = Self.number(store, removed)
            if wasKilled && recorded > 0 {
                #expect(recorded == 3_000, "attempt \(attempt): \(recorded) removed")
                landed.insert(resume)
            }
            let again = try runCommand(sluice, sync + ["--into", store] + (resume ? ["--resume"] : []))
            #expect(again.status == 0, "attempt \(attempt): \(again.stderr)")
            #expect(
                dump(store) == expected, "attempt \(attempt): killed with \(recorded) keys recorded, the store differs")
            #expect(statuses(store).last == "completed", "attempt \(attempt): \(statuses(store))")
            guard !resume else { continue }
            #expect(try runCommand(sluice, sync + ["--into", store, "--stats-json", stats]).status == 0)
            #expect(try skipped().contains(#""unchangedRecords": 27000"#), "attempt \(attempt)")
            #expect(dump(store) == expected)
        }
        #expect(landed == [true, false], "kills landed once the removed keys were recorded, resumed then: \(landed)")
    }
}
