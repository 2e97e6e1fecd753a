@_spi(Machinery) import SluiceRecords

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

    /// Places the next bytes, the first of `unit`, where `unit` starts in the
    /// input, in its `context` (a parse fed only some units: their locations
    /// are those of the whole input). JSON: its byte offset, line and column;
    /// XML: those, inside the document the context opens
    /// (``XMLPushParser/skip(to:line:column:open:close:)``).
    func skip(to unit: UnitBoundary, context: UnitContext) throws(ParseError) {
        if let xml {
            try xml.skip(
                to: unit.byteOffset, line: unit.line, column: unit.column, open: context.open, close: context.close)
        } else {
            try json?.skip(
                to: unit.byteOffset, line: unit.line, lineStart: unit.byteOffset - Int64(unit.column - 1))
        }
    }

    /// Ends the input; an incomplete document is an error.
    func finish() throws(ParseError) {
        if let xml { try xml.finish() } else { try json?.finish() }
    }
}
