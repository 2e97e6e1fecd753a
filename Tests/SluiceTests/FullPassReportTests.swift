import Foundation
import Sluice
import SluiceTestSupport
import Testing

/// What a library caller's ``ImportReport`` says of the record digests: a
/// push, which is not cut into units, and a run with `noSkip` void the
/// store's set; the push says why it parsed everything, and the next run
/// says that the set is not valid and makes it anew (docs/record-digests.md,
/// "When a run parses everything").
@Suite struct FullPassReportTests {
    let mapping = try! Mapping.parse(
        yaml: "entities: {Item: {records: $, key: id, attributes: {id: integer, name: string}}}")
    let text = (1...1_000).map { "{\"id\": \($0), \"name\": \"n\($0)\"}\n" }.joined()
    let notValid =
        "the store's record digests are not valid (an earlier run voided them or did not finish); this run made them anew"

    func file(_ store: String, noSkip: Bool = false) throws -> ImportReport {
        var options = ImportOptions()
        options.noSkip = noSkip
        return try Importer(mapping: mapping, store: store, options: options).runBlocking(inputs: [
            TestPaths.file("items.jsonl", text)
        ])
    }

    @Test func aPushVoidsTheDigestsAndSaysWhy() throws {
        let store = TestPaths.temporaryDirectory().appendingPathComponent("push.sqlite").path
        #expect(try file(store).fullPass == nil)
        let again = try file(store)
        #expect(again.unchangedRecords == 1_000 && again.fullPass == nil)
        let push = try Importer(mapping: mapping, store: store).startPush(name: "network", format: .jsonl)
        try push.push(Array(text.utf8))
        let pushed = try push.finish()
        #expect(pushed.fullPass == "record digests are off (pushed input is not cut into units)")
        #expect(pushed.warnings.contains { $0.hasPrefix("record digests voided (pushed input is not cut into units)") })
        let after = try file(store)
        #expect(after.unchangedRecords == 0 && after.fullPass == notValid)
        let skipping = try file(store)
        #expect(skipping.unchangedRecords == 1_000 && skipping.fullPass == nil)
    }

    /// `noSkip` is what the caller asked for: its run says nothing, but it
    /// voids the set, and the next run says so.
    @Test func aRunWithNoSkipVoidsTheDigestsQuietly() throws {
        let store = TestPaths.temporaryDirectory().appendingPathComponent("noskip.sqlite").path
        _ = try file(store)
        let full = try file(store, noSkip: true)
        #expect(full.unchangedRecords == 0 && full.fullPass == nil)
        #expect(!full.warnings.contains { $0.contains("record digests") })
        let after = try file(store)
        #expect(after.unchangedRecords == 0 && after.fullPass == notValid)
        #expect(try file(store).unchangedRecords == 1_000)
    }
}
