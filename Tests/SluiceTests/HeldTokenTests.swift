import Foundation
import Sluice
import SluiceTestSupport
import Testing

/// What yajl holds of an unfinished token is what the token bound counts
/// (issue 17): white space between values was counted as one oversized
/// value (`[` and 1 GiB of spaces, 16 MiB of blank JSON Lines), and a long
/// number was refused only after quadratic re-lexing (8 MiB: 2.8 s).
@Suite struct HeldTokenTests {
    let items = "entities: {A: {records: $, key: id, attributes: {id: integer, text: string}}}"
    let array = "entities: {A: {records: \"$[*]\", key: id, attributes: {id: integer, text: string}}}"
    var small: RecordLimits {
        var limits = RecordLimits()
        limits.maxFieldBytes = 1 << 20
        return limits
    }

    @Test func whiteSpaceBetweenValuesIsNotAValue() throws {
        let spaces = String(repeating: " ", count: 3 << 20)
        #expect(
            try limitError(
                array, "a.json", "[" + spaces + #"{"id": 1}"# + spaces + "," + spaces + #"{"id": 2}"# + spaces + "]",
                small) == "no error")
        let blank = String(repeating: "\n", count: 3 << 20)
        #expect(
            try limitError(items, "a.jsonl", blank + #"{"id": 1}"# + blank + #"{"id": 2}"# + "\n", small) == "no error")
    }

    /// On one thread, which feeds the parser the input's chunks and checks
    /// the held token at each chunk's end: a parse worker feeds its item
    /// whole, so the number ends in it and the field bound refuses it.
    @Test func aLongNumberIsRefusedAtItsOwnBound() throws {
        let digits = String(repeating: "7", count: 4 << 20)
        let started = Date()
        let message = try limitError(
            items, "n.jsonl", #"{"id": 1, "text": "a"}"# + "\n" + #"{"id": "# + digits + "}\n", small, threads: 1)
        #expect(
            message.contains("a number (or true, false, null) longer than 65536 bytes")
                && message.contains("n.jsonl:2:"), "\(message)")
        #expect(Date().timeIntervalSince(started) < 10)
    }

    @Test func aLongStringAfterAnEventStillCounts() throws {
        // The string starts after the chunk's last event and runs on.
        let text = String(repeating: "s", count: 3 << 20)
        let message = try limitError(items, "s.jsonl", #"{"id": 1, "text": ""# + text + "\"}\n", small)
        #expect(message.contains("max-field-bytes"), "\(message)")
    }
}
