import SluiceParsers
import Testing

/// Records parser events as text lines.
final class EventLog: XMLEventHandler, JSONEventHandler {
    var events: [String] = []
    var stopAt: String?

    func startElement(name: ByteSpan, attributes: UnsafeBufferPointer<XMLAttribute>) throws {
        let attrs = attributes.map { "\($0.name.string)=\($0.value.string)" }.joined(separator: ",")
        events.append("<\(name.string)\(attrs.isEmpty ? "" : " " + attrs)>")
        if events.last == stopAt { throw StopError() }
    }
    func endElement() throws { events.append("</>") }
    func characters(_ text: ByteSpan) throws {
        if events.last?.hasPrefix("text:") == true { events[events.count - 1] += text.string } else { events.append("text:" + text.string) }
    }
    func startObject() throws { events.append("{") }
    func key(_ name: ByteSpan) throws { events.append("key:" + name.string) }
    func endObject() throws { events.append("}") }
    func startArray() throws { events.append("[") }
    func endArray() throws { events.append("]") }
    func scalar(_ kind: JSONScalarKind, _ text: ByteSpan) throws { events.append("\(kind):\(text.string)") }
}

struct StopError: Error, CustomStringConvertible { var description: String { "stopped by handler" } }

/// Hands `bytes` to `feed` in pieces of `chunk` bytes.
func feedInChunks(_ bytes: [UInt8], _ chunk: Int, _ feed: (UnsafeRawBufferPointer) throws -> Void) throws {
    var index = 0
    while index < bytes.count {
        let end = min(index + chunk, bytes.count)
        try bytes[index..<end].withUnsafeBytes { try feed($0) }
        index = end
    }
}

func feedXML(_ text: String, chunk: Int = 65_536, log: EventLog = EventLog()) throws -> [String] {
    let parser = XMLPushParser(handler: log, name: "test.xml")
    try feedInChunks(Array(text.utf8), chunk) { try parser.feed($0) }
    try parser.finish()
    return log.events
}

func feedJSON(_ text: String, chunk: Int = 65_536, multiple: Bool = true) throws -> [String] {
    let log = EventLog()
    let parser = JSONPushParser(handler: log, name: "test.json", multipleValues: multiple)
    try feedInChunks(Array(text.utf8), chunk) { try parser.feed($0) }
    try parser.finish()
    return log.events
}

@Suite struct XMLParserTests {
    @Test func deliversElementsAttributesAndText() throws {
        let events = try feedXML(#"<a x="1"><b y="&lt;&amp;&#38;&quot;">t&amp;u</b><![CDATA[<c>]]></a>"#)
        #expect(events == ["<a x=1>", "<b y=<&&\">", "text:t&u", "</>", "text:<c>", "</>"])
    }

    @Test func oneByteChunksGiveTheSameEvents() throws {
        let text = #"<?xml version="1.0"?><root><row Id="1" Body="x &amp; y"/><row Id="2">é</row></root>"#
        #expect(try feedXML(text, chunk: 1) == feedXML(text))
    }

    @Test func malformedDocumentReportsLineAndColumn() throws {
        do {
            _ = try feedXML("<a>\n  <b></c>\n</a>")
            Issue.record("accepted a malformed document")
        } catch let error as ParseError {
            #expect(error.location.line == 2)
            #expect(error.location.column != nil)
            #expect(error.location.file == "test.xml")
            #expect("\(error)".hasPrefix("test.xml:2:"))
        }
    }

    @Test func truncatedDocumentIsAnError() {
        #expect(throws: ParseError.self) { try feedXML("<a><b>text</b>") }
        #expect(throws: ParseError.self) { try feedXML("") }
    }

    @Test func entityDeclarationsAreRefused() throws {
        let bomb = #"<!DOCTYPE x [<!ENTITY a "aaaa"><!ENTITY b "&a;&a;&a;">]><x>&b;</x>"#
        do {
            _ = try feedXML(bomb)
            Issue.record("accepted an entity declaration")
        } catch {
            #expect("\(error)".contains("entity"))
        }
    }

    @Test func externalEntitiesAreNeverLoaded() throws {
        let external = #"<!DOCTYPE x SYSTEM "file:///etc/passwd"><x>hi</x>"#
        let events = (try? feedXML(external)) ?? []
        #expect(!events.joined().contains("root:"))
    }

    @Test func handlerErrorsStopTheParse() throws {
        let log = EventLog()
        log.stopAt = "<b>"
        do {
            _ = try feedXML("<a><b/><c/></a>", log: log)
            Issue.record("the handler's error was lost")
        } catch let error as ParseError {
            guard case .rejected(let inner) = error.reason else { Issue.record("wrong reason"); return }
            #expect(inner is StopError)
            #expect(!log.events.contains("<c>"))
        }
    }
}

@Suite struct JSONParserTests {
    @Test func numbersStayText() throws {
        let events = try feedJSON(#"{"id": 10158365420975381, "r": 1.50, "e": 1e400}"#)
        #expect(events == ["{", "key:id", "number:10158365420975381", "key:r", "number:1.50", "key:e", "number:1e400", "}"])
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
