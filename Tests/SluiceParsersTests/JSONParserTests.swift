import SluiceParsers
import Testing

@Suite struct JSONParserTests {
    @Test func numbersStayText() throws {
        let events = try feedJSON(#"{"id": 10158365420975381, "r": 1.50, "e": 1e400}"#)
        #expect(
            events == ["{", "key:id", "number:10158365420975381", "key:r", "number:1.50", "key:e", "number:1e400", "}"])
    }

    @Test func readsJSONLinesAndSkipsBOM() throws {
        let events = try feedJSON("\u{FEFF}{\"a\":true}\n{\"a\":null}\n[\"x\"]\n", chunk: 1)
        #expect(events == ["{", "key:a", "true:", "}", "{", "key:a", "null:", "}", "[", "string:x", "]"])
    }

    @Test func singleDocumentRefusesASecondValue() {
        #expect(throws: ParseError.self) { try feedJSON("{}{}", multiple: false) }
    }

    @Test func partialValueAtEndIsAnError() {
        #expect(throws: ParseError.self) { try feedJSON("{\"a\":1}\n{\"a\":") }
        #expect(throws: ParseError.self) { try feedJSON("[1, 2") }
    }

    @Test func errorsCarryLineColumnAndAbsoluteOffset() throws {
        let text = "{\"a\":1}\n{\"a\":2}\n{\"a\": tru}\n"
        for chunk in [1, 5, 4096] {
            do {
                _ = try feedJSON(text, chunk: chunk)
                Issue.record("accepted invalid JSON")
            } catch let error as ParseError {
                #expect(error.location.line == 3)
                #expect(error.location.byteOffset != nil)
                #expect((error.location.byteOffset ?? 0) >= 16)
                #expect((error.location.byteOffset ?? 0) <= Int64(text.utf8.count))
            }
        }
    }
}
