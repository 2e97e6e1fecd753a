@_spi(Machinery) import SluiceRecords

/// Where the parse side may cut one JSON document (record paths below its
/// top level) into items for the workers.
extension InputSplit {
    /// One JSON document: the context a worker parses before an item that
    /// starts at `boundary`, the start of a unit in `chunk` with `context`
    /// (the path to it written as JSON, ``UnitContext/open``), when an item
    /// may start there; `nil` when it may not, and for JSON Lines and XML.
    /// An item starts only at a unit that is an object or an array: the
    /// worker of the item before checks that a value may stand there by an
    /// empty object's marker (``ParseWorker/checkNextValue(with:numbering:)``),
    /// which a whole parse's first token there, `{` or `[`, meets in the same
    /// state with the same message. A document of scalar units is one item.
    /// Cost: a look at the unit's first byte.
    func documentStart(at boundary: UnitBoundary, _ context: UnitContext, in chunk: UnsafeRawBufferPointer)
        -> [UInt8]?
    {
        guard documentContext != nil, boundary.offsetInChunk < chunk.count else { return nil }
        let first = chunk[boundary.offsetInChunk]
        guard first == UInt8(ascii: "{") || first == UInt8(ascii: "[") else { return nil }
        return context.open
    }
}

/// Which inputs of a run that parses on several threads the parse side
/// cuts into items, as one JSON document.
extension ParseSide {
    /// Whether the parser reads an input of `format` as any number of
    /// top-level values: JSON Lines, or a mapping with a `$` record path
    /// (each top-level value one record). Else a JSON input is one document.
    func multipleValues(_ format: InputFormat) -> Bool {
        format == .jsonl || compiled.routes.contains { $0.path.components.isEmpty }
    }

    /// Whether each unit the record-boundary scanner cuts an input of
    /// `format` into is one record, numbered as the scanner numbers units,
    /// so that its items may go to the workers: XML, one JSON document (its
    /// elements on record paths, which never nest: a record holds what is
    /// below it), and top-level values that a `$` path makes records; not
    /// records nested inside the values of JSON Lines.
    func unitsAreRecords(_ format: InputFormat) -> Bool {
        format != .jsonl || compiled.routes.contains { $0.path.components.isEmpty }
    }
}
