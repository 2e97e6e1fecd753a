import SluiceParsers
import Testing

/// Records events as ``EventLog`` does, a string that arrives in pieces
/// joined into one event; counts the strings that did.
final class PieceLog: JSONStringPieceHandler {
    var events: [String] = []
    var piecedStrings = 0
    private var pieces: [UInt8] = []

    func startObject() throws { events.append("{") }
    func key(_ name: ByteSpan) throws { events.append("key:" + name.string) }
    func endObject() throws { events.append("}") }
    func startArray() throws { events.append("[") }
    func endArray() throws { events.append("]") }
    func scalar(_ kind: JSONScalarKind, _ text: ByteSpan) throws { events.append("\(kind):\(text.string)") }
    func stringStart(_ text: ByteSpan) throws { pieces = Array(text) }
    func stringPiece(_ text: ByteSpan) throws { pieces += text }
    func stringEnd() throws {
        events.append("string:" + String(decoding: pieces, as: UTF8.self))
        piecedStrings += 1
    }
}

@Suite struct JSONLongStringTests {
    /// Strings longer than this are handed over in pieces in these tests.
    static let longStringBytes = 16

    /// Escapes of every kind and multi-byte characters, raw and escaped, so
    /// that chunk boundaries fall inside each of them somewhere.
    static let tricky = #"é€😀 \n\"\\\/\b\f\r\t\u00e9\u20AC\uD83D\uDE00\u0000 end "#

    static let document: [UInt8] = {
        let plain = String(repeating: "abcdefghij", count: 5)
        let mixed = String(repeating: tricky, count: 4)
        let lines = [
            #"{"id": 1, "a": "\#(plain)\#(mixed)\#(plain)", "b": "short", "c": "\#(mixed)"}"#,
            #"{"\#(mixed)": "\#(plain)", "n": ["\#(mixed)", 12, "x", "\#(plain)"]}"#,
            #""\#(mixed)\#(plain)""#,
            #"{"e": "", "f": "\#(String(repeating: "\\u00e9", count: 40))"}"#,
        ]
        return Array((lines.joined(separator: "\n") + "\n").utf8)
    }()

    /// Events of `bytes` fed whole to a parser without pieces: what yajl
    /// gives holding every string whole.
    static func wholeEvents(_ bytes: [UInt8]) throws -> [String] {
        let log = EventLog()
        let parser = JSONPushParser(handler: log, name: "test.jsonl", multipleValues: true)
        try bytes.withUnsafeBytes { try parser.feed($0) }
        try parser.finish()
        return log.events
    }

    /// Every value round-trips byte for byte whatever the chunks: escapes,
    /// surrogate pairs and multi-byte characters cut by a chunk's end, in
    /// yajl's part of a string or in the parser's, long keys (whole), long
    /// strings as record values, array items and top-level values.
    @Test func longStringsInPiecesEqualTheWholeStrings() throws {
        let expected = try Self.wholeEvents(Self.document)
        for chunk in [1, 2, 3, 5, 7, 11, 16, 17, 31, 64, 100, 257, 4096] {
            let log = PieceLog()
            let parser = JSONPushParser(
                handler: log, name: "test.jsonl", multipleValues: true, longStringBytes: Self.longStringBytes)
            try feedInChunks(Self.document, chunk) { try parser.feed($0) }
            try parser.finish()
            #expect(log.events == expected, "chunks of \(chunk)")
            if chunk < 200 { #expect(log.piecedStrings > 0, "chunks of \(chunk)") }
        }
    }

    /// A handler that takes no pieces, or a parser not asked for them, gets
    /// every string whole.
    @Test func withoutPiecesStringsArriveWhole() throws {
        let log = EventLog()
        let parser = JSONPushParser(
            handler: log, name: "test.jsonl", multipleValues: true, longStringBytes: Self.longStringBytes)
        try feedInChunks(Self.document, 7) { try parser.feed($0) }
        try parser.finish()
        #expect(log.events == (try Self.wholeEvents(Self.document)))
    }

    /// A damaged long string fails with the message and the place (line,
    /// column, byte offset) a parse holding it whole gives.
    @Test(arguments: [
        Array(#"{"a": "x\#u{01}y"}"#.utf8),
        Array(#"{"a": "x\qy"}"#.utf8),
        Array(#"{"a": "x\u12G4y"}"#.utf8),
        Array(#"{"a": "x\#u{0C}y"}"#.utf8),
        Array(#"{"a": "x\uD800zy"}"#.utf8),
        Array(#"{"a": "x"#.utf8) + [0xC3, 0x28] + Array(#"y"}"#.utf8),
        Array(#"{"a": "xy"#.utf8),
        Array(Array(#"{"a": "xé"#.utf8).dropLast()),
        Array(#"["b" "xy"]"#.utf8),
        Array(#"{"a": 1 "xy": 2}"#.utf8),
    ])
    func aDamagedLongStringFailsWhereAWholeOneDoes(damaged: [UInt8]) throws {
        let filler = Array(String(repeating: "0123456789", count: 10).utf8)
        var text = Array(#"{"ok": 1}"#.utf8) + [0x0A]
        for byte in damaged {
            text.append(byte)
            if byte == UInt8(ascii: "x") { text += filler }
        }
        for chunk in [3, 7, 16, 64, 1 << 16] {
            func failure(pieces: Bool) -> String {
                do {
                    if pieces {
                        let parser = JSONPushParser(
                            handler: PieceLog(), name: "test.jsonl", multipleValues: true,
                            longStringBytes: Self.longStringBytes)
                        try feedInChunks(text, chunk) { try parser.feed($0) }
                        try parser.finish()
                    } else {
                        let parser = JSONPushParser(handler: EventLog(), name: "test.jsonl", multipleValues: true)
                        try feedInChunks(text, chunk) { try parser.feed($0) }
                        try parser.finish()
                    }
                    return "accepted"
                } catch {
                    return "\(error)"
                }
            }
            let whole = failure(pieces: false)
            #expect(whole.hasPrefix("test.jsonl:2:"), "\(whole)")
            #expect(failure(pieces: true) == whole, "chunks of \(chunk)")
        }
    }

    /// A string longer than max-field-bytes fails as it did when yajl held
    /// it: where a chunk ends with more of it than the limit.
    @Test func aLongStringOverTheTokenLimitFailsAsBefore() throws {
        let text = Array(#"{"a": "\#(String(repeating: "x", count: 500))"}"#.utf8)
        func failure(pieces: Bool) -> String {
            do {
                let parser = JSONPushParser(
                    handler: PieceLog(), name: "test.jsonl", multipleValues: true, maxTokenBytes: 200,
                    longStringBytes: pieces ? Self.longStringBytes : nil)
                try feedInChunks(text, 64) { try parser.feed($0) }
                try parser.finish()
                return "accepted"
            } catch {
                return "\(error)"
            }
        }
        let before = failure(pieces: false)
        #expect(before.contains("no complete JSON token"), "\(before)")
        #expect(failure(pieces: true) == before)
    }
}
