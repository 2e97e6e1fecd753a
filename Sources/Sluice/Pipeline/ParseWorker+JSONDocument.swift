@_spi(Machinery) import SluiceRecords

/// What a worker does for the items of one JSON document beyond what it
/// does for JSON Lines: each item is parsed by a parser of its own, which
/// reads one value, placed after the path to its first unit
/// (``ParseItem/documentContext``), and its bytes run to the next item's
/// first unit, so that the worker parses the structure between its units
/// (commas, the ends of the arrays and objects around them, what follows
/// the last) as a whole parse does.
extension ParseWorker {
    /// Checks that a value may stand where the next item's first unit
    /// starts, just past this item's bytes: the parse side cuts items only
    /// at a unit that is an object or an array (``InputSplit/documentStart(at:_:in:)``),
    /// so `parser` is fed the marker of an empty object in its place
    /// (``DocumentParser/feed(skipping:starts:ends:)``), at its location. A
    /// missing comma between two units there fails here with the message
    /// and location of a whole parse, which reads the same state and the
    /// same first token. The marker numbers a record in `assembler`, which
    /// is numbered back: the item's checkpoint counts its own records only.
    /// Cost: one token.
    static func checkNextValue(with parser: DocumentParser, numbering assembler: RecordAssembler) throws(ParseError) {
        let records = assembler.recordCount
        let checked = openBrace.withUnsafeBytes { bytes in
            Result { () throws(ParseError) in try parser.feed(skipping: bytes, starts: true, ends: true) }
        }
        try checked.get()
        assembler.numberNext(records + 1)
    }

    private static let openBrace: [UInt8] = [UInt8(ascii: "{")]
}
