import SluiceParsers

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
        if events.last?.hasPrefix("text:") == true {
            events[events.count - 1] += text.string
        } else {
            events.append("text:" + text.string)
        }
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
