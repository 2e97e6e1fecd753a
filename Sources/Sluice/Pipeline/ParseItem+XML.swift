extension ParseItem {
    /// Where an XML item after its input's first starts, beside its
    /// ``ParseItem/start``: the bytes its first unit is parsed after (the
    /// unit's ``UnitContext/open``: the declaration, the DOCTYPE, the open
    /// ancestors' start tags) and the unit's column in characters, as
    /// libxml2 counts it (the scanner counts bytes). A worker parses each
    /// such item with a parser of its own, placed there
    /// (``DocumentParser/place(after:at:column:)``).
    struct XMLStart: Sendable {
        var context: [UInt8]
        var column: Int
    }
}
