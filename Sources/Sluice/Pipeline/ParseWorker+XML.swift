@_spi(Machinery) import SluiceRecords

/// What a worker does for XML items beyond what it does for JSON Lines.
extension ParseWorker {
    /// Makes `parser` parse every byte of `item`, an item before its input's
    /// last: an XML item ends where the next one's first unit starts, and
    /// libxml2 holds back the text before it until it sees the `<` that ends
    /// the text, so that `<` (the next item's first byte) is fed too; an
    /// error in the item's last bytes is then found in the item, as a whole
    /// parse finds it. One JSON document: the next item's first value, when
    /// one follows, is checked to stand where it stands
    /// (``checkNextValue(with:numbering:)``, with `assembler`'s record count
    /// kept). The parser is not used again.
    /// JSON Lines: nothing.
    static func parseThrough(
        _ item: ParseItem, with parser: DocumentParser, numbering assembler: RecordAssembler
    ) throws(ParseError) {
        if item.documentContext != nil {
            guard item.endsAtUnit else { return }
            return try checkNextValue(with: parser, numbering: assembler)
        }
        guard item.format == .xml else { return }
        let fed = lessThan.withUnsafeBytes { bytes in Result { () throws(ParseError) in try parser.feed(bytes) } }
        try fed.get()
    }

    private static let lessThan: [UInt8] = [UInt8(ascii: "<")]
}
