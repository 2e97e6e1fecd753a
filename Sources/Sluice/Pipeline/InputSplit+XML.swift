@_spi(Machinery) import SluiceRecords

/// Where the parse side may cut an XML input into items for the workers.
extension InputSplit {
    /// XML: how a worker places its parser at `boundary`, the start of a
    /// unit in `chunk` with `context`, when an item may start there; `nil`
    /// when it may not, and for JSON. An item starts only where its parser
    /// can be placed exactly as a whole parse reads the unit: the unit's
    /// start tag whole in the chunk (not carried), with ancestors to parse
    /// it after, its line's start in the chunk (so that its column can be
    /// counted in characters), in a document in UTF-8 (a declared encoding
    /// other than UTF-8 would be read through a decoder whose columns and
    /// byte counts a placed parser cannot repeat: such a document is one
    /// item, one worker's). Cost: a count of the bytes before the unit on
    /// its line; once an input, a read of its XML declaration.
    func xmlStart(at boundary: UnitBoundary, _ context: UnitContext, in chunk: UnsafeRawBufferPointer)
        -> ParseItem.XMLStart?
    {
        guard format == .xml, context.carried.isEmpty, !context.open.isEmpty else { return nil }
        if encodingCuttable == nil { encodingCuttable = Self.declaresUTF8(context.open) }
        let before = boundary.column - 1
        let at = boundary.offsetInChunk
        guard encodingCuttable == true, before <= at else { return nil }
        var continuations = 0
        for byte in chunk[(at - before)..<at] where byte & 0xC0 == 0x80 { continuations += 1 }
        return ParseItem.XMLStart(context: context.open, column: boundary.column - continuations)
    }

    /// Whether `prolog`, the bytes a unit's context opens with, is a
    /// document in UTF-8: no XML declaration, or one without an encoding
    /// or with `UTF-8` (any case). libxml2 reads those bytes as they are.
    static func declaresUTF8(_ prolog: [UInt8]) -> Bool {
        var text = prolog[...]
        if text.starts(with: [0xEF, 0xBB, 0xBF]) { text = text.dropFirst(3) }
        guard text.starts(with: Array("<?xml".utf8)) else { return true }
        let declaration = text.prefix { $0 != UInt8(ascii: ">") }
        let name = Array("encoding".utf8)
        guard let found = declaration.indices.first(where: { declaration[$0...].starts(with: name) }) else {
            return true
        }
        let value = declaration[(found + name.count)...].drop { " \t\r\n=\"'".utf8.contains($0) }
            .prefix { $0 != UInt8(ascii: "\"") && $0 != UInt8(ascii: "'") }
        let encoding = String(decoding: value, as: UTF8.self).lowercased()
        return encoding == "utf-8" || encoding == "utf8"
    }
}
