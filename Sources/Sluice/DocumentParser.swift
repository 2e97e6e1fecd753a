/// The parser for one input: libxml2 for XML, yajl for JSON and JSON Lines,
/// both feeding the same handler (the record assembler, or inference).
struct DocumentParser {
    private let xml: XMLPushParser?
    private let json: JSONPushParser?

    /// A parser of `format` for the input called `name`; JSON accepts several
    /// top-level values when `multipleValues`.
    init(
        format: InputFormat, handler: XMLEventHandler & JSONEventHandler, name: String, compressed: Bool,
        multipleValues: Bool,
        limits: RecordLimits
    ) {
        if format == .xml {
            xml = XMLPushParser(handler: handler, name: name, decompressed: compressed)
            json = nil
        } else {
            xml = nil
            json = JSONPushParser(
                handler: handler, name: name, multipleValues: multipleValues, decompressed: compressed,
                maxTokenBytes: limits.maxFieldBytes)
        }
    }

    /// Parses the next bytes.
    func feed(_ bytes: UnsafeRawBufferPointer) throws(ParseError) {
        if let xml { try xml.feed(bytes) } else { try json?.feed(bytes) }
    }

    /// Places the next bytes at `byteOffset` of the input, on `line` starting
    /// at `lineStart` (JSON; a parse fed only some values).
    func skip(to byteOffset: Int64, line: Int, lineStart: Int64) throws(ParseError) {
        try json?.skip(to: byteOffset, line: line, lineStart: lineStart)
    }

    /// Ends the input; an incomplete document is an error.
    func finish() throws(ParseError) {
        if let xml { try xml.finish() } else { try json?.finish() }
    }
}
