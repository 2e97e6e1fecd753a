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
                maxTokenBytes: limits.maxFieldBytes, longStringBytes: ValueSpill.threshold)
        }
    }

    /// Parses the next bytes.
    func feed(_ bytes: UnsafeRawBufferPointer) throws(ParseError) {
        if let xml { try xml.feed(bytes) } else { try json?.feed(bytes) }
    }

    /// Places the next bytes, the first of `unit`, where `unit` starts in the
    /// input (JSON Lines: a parse fed only some units gives them the byte
    /// offset, line and column they have in the whole input). XML and one
    /// JSON document are fed whole, the units they skip each replaced by a
    /// marker (``feed(skipping:starts:ends:)``).
    func skip(to unit: UnitBoundary) throws(ParseError) {
        try skip(to: unit.byteOffset, line: unit.line, column: unit.column)
    }

    /// Places the next bytes at `byteOffset`, `line` and `column` (1-based)
    /// of the input: ``skip(to:)`` of a unit read from its place
    /// (``UnitPositions``).
    func skip(to byteOffset: Int64, line: Int, column: Int) throws(ParseError) {
        try json?.skip(to: byteOffset, line: line, lineStart: byteOffset - Int64(column - 1))
    }

    /// Starts a parse of part of a document at `unit`, its first unit:
    /// `context` (the unit's ``UnitContext/open``) is parsed first and the
    /// location moved to the unit's line, its `column` and its byte offset.
    /// XML: the column in characters
    /// (``XMLPushParser/place(after:line:column:byteOffset:)``); one JSON
    /// document: the path to the unit written as JSON (`{"items":[`), the
    /// column in bytes, as the JSON parser counts it.
    func place(after context: [UInt8], at unit: UnitBoundary, column: Int) throws(ParseError) {
        let placed = context.withUnsafeBytes { bytes in
            Result { () throws(ParseError) in
                if let xml {
                    try xml.place(after: bytes, line: unit.line, column: column, byteOffset: unit.byteOffset)
                } else if let json {
                    try json.feed(bytes)
                    try json.skip(to: unit.byteOffset, line: unit.line, lineStart: unit.byteOffset - Int64(column - 1))
                }
            }
        }
        try placed.get()
    }

    /// Places the next bytes, the first of a unit read from its `place`
    /// (``UnitPositions``), where that unit is in the input. JSON values:
    /// ``skip(to:line:column:)``. XML: the first unit after its `context`
    /// (``place(after:at:column:)``, every unit of an input having the
    /// same), each later one after the end tag of the last, the location
    /// moved (``XMLPushParser/move(line:column:byteOffset:)``); `place`'s
    /// column is in characters. Costs the parse of `context` once.
    func place(_ place: UnitPositions.Place, after context: [UInt8]) throws(ParseError) {
        guard let xml else { return try skip(to: place.start, line: place.line, column: place.column) }
        guard !xml.started else { return xml.move(line: place.line, column: place.column, byteOffset: place.start) }
        let placed = context.withUnsafeBytes { bytes in
            Result { () throws(ParseError) in
                try xml.place(after: bytes, line: place.line, column: place.column, byteOffset: place.start)
            }
        }
        try placed.get()
    }

    /// Reads `bytes` of a unit the parse skips, in its place a marker
    /// (``XMLPushParser/feed(skipping:starts:ends:)``,
    /// ``JSONPushParser/feed(skipping:starts:ends:)``); `starts` and `ends`
    /// when they are its first and its last.
    func feed(skipping bytes: UnsafeRawBufferPointer, starts: Bool, ends: Bool) throws(ParseError) {
        if let xml {
            try xml.feed(skipping: bytes, starts: starts, ends: ends)
        } else {
            try json?.feed(skipping: bytes, starts: starts, ends: ends)
        }
    }

    /// Ends the input; an incomplete document is an error.
    func finish() throws(ParseError) {
        if let xml { try xml.finish() } else { try json?.finish() }
    }
}
