import Foundation
import Sluice
import SluiceTestSupport
import Testing

@Suite struct LedgerTests {
    @Test func runsAreRecordedWithTheirOutcome() throws {
        let store = newStore()
        let yaml = "entities: {E: {records: $, key: id, attributes: {id: integer}}}"
        try sync(yaml, "{\"id\": 1}\n{\"id\": 2}", store: store)
        #expect(throws: ImportError.self) {
            try sync(yaml, "{\"id\": 3}\n{\"id\": oops}", store: store, name: "bad.jsonl")
        }
        let status = try Status.read(store: store)
        #expect(status.runs.map(\.status) == [.failed, .completed])
        #expect(status.runs[1].records == 2)
        #expect(status.runs[1].counts?.contains("\"inserted\": 2") == true)
        #expect(status.runs[0].error?.contains("bad.jsonl:2:") == true)
        #expect(status.tables.map(\.name) == ["E"])
        #expect(status.checkpoints.contains { $0.input.hasSuffix("in.jsonl") && $0.records == 2 })
    }

    @Test func statusOfAMissingStoreIsAnInputError() {
        #expect(throws: ImportError.self) { try Status.read(store: "/nonexistent/store.sqlite") }
    }
}
