import Sluice
import SluiceTestSupport
import Testing

@Suite struct RecordLimitTests {
    let jsonItems = "entities: {A: {records: $, key: id, attributes: {id: integer, text: string}}}"
    let xmlRows = "entities: {A: {records: /rows/row, key: id, attributes: {id: integer, text: string}}}"

    func limits(_ change: (inout RecordLimits) -> Void) -> RecordLimits {
        var limits = RecordLimits()
        change(&limits)
        return limits
    }

    @Test func fieldBytesInJSONStopBeforeYajlBuffersTheWholeToken() throws {
        let big = String(repeating: "x", count: 5 << 20)
        let message = try limitError(
            jsonItems, "big.jsonl", "{\"id\": 1, \"text\": \"a\"}\n{\"id\": 2, \"text\": \"\(big)\"}\n",
            limits { $0.maxFieldBytes = 1 << 20 })
        #expect(message.contains("max-field-bytes"))
        #expect(message.contains("big.jsonl:2:"))
    }

    @Test func fieldBytesInXMLText() throws {
        let big = String(repeating: "y", count: 3 << 20)
        let message = try limitError(
            xmlRows, "big.xml", "<rows><row id=\"1\"><text>\(big)</text></row></rows>",
            limits { $0.maxFieldBytes = 1 << 20 })
        #expect(message.contains("max-field-bytes"))
        #expect(message.contains("big.xml:1:"))
        #expect(message.contains("record 1"))
    }

    @Test func fieldsPerRecord() throws {
        let members = (0..<5_000).map { "\"f\($0)\": \($0)" }.joined(separator: ", ")
        let message = try limitError(
            jsonItems, "wide.jsonl", "{\"id\": 1, \(members)}\n", limits { $0.maxFields = 1_000 })
        #expect(message.contains("max-fields"))
        #expect(message.contains("record 1"))
    }

    @Test func recordBytes() throws {
        let rows = (0..<100).map { "<row id=\"\($0)\"><text>\(String(repeating: "z", count: 2_000))</text></row>" }
        let message = try limitError(
            xmlRows, "rows.xml", "<rows><row id=\"0\">" + rows.joined() + "</row></rows>",
            limits { $0.maxRecordBytes = 64 << 10 })
        #expect(message.contains("max-record-bytes"))
    }

    @Test func depthInXMLOutsideAndInsideRecords() throws {
        let deep = String(repeating: "<a>", count: 2_000) + String(repeating: "</a>", count: 2_000)
        let outside = try limitError(xmlRows, "deep.xml", deep, RecordLimits())
        #expect(outside.contains("max-depth (1000)"))
        let inside = try limitError(xmlRows, "deep2.xml", "<rows><row id=\"1\">\(deep)</row></rows>", RecordLimits())
        #expect(inside.contains("max-depth"))
        #expect(inside.contains("record 1"))
    }

    @Test func checkAppliesTheLimitsToo() throws {
        let deep = String(repeating: "[", count: 100_000) + String(repeating: "]", count: 100_000)
        #expect(throws: ImportError.self) { try Checker.check(path: TestPaths.file("deep.json", deep)) }
        let huge = "[\"" + String(repeating: "q", count: 2 << 20) + "\"]"
        var small = RecordLimits()
        small.maxFieldBytes = 1 << 20
        #expect(throws: ImportError.self) { try Checker.check(path: TestPaths.file("huge.json", huge), limits: small) }
    }
}
