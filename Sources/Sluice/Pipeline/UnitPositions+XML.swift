@_spi(Machinery) import SluiceRecords

/// The places of an XML input's units (docs/record-digests.md, "The
/// selected units read at their places"): a unit read from its place is
/// parsed by a parser placed after its context (the declaration, the
/// DOCTYPE, its open ancestors' start tags), as a parse worker places one
/// (``InputSplit/xmlStart(at:_:in:)``), and the units after it by the same
/// parser, its location moved to each. So an input's places are kept only
/// when every unit has the same context (records that are children of one
/// element, as in a dump) and the document is in UTF-8 (a decoder's columns
/// and byte counts cannot be repeated by a placed parser); the context is
/// held once an input.
extension UnitPositions {
    /// The most bytes of an input's context that its places keep: a larger
    /// one (a DOCTYPE with a long internal subset) is read whole instead.
    static let maxContextBytes = 1 << 20

    /// Notes the start of an XML unit whose context opens with `open`
    /// (``UnitContext/open``). A unit whose context differs from the first
    /// unit's, or a first context that is empty (the record is the root),
    /// too long, or not of a document in UTF-8, makes the input's places
    /// forgotten at its end. Costs a comparison of the context's bytes.
    func started(_ boundary: UnitBoundary, context open: [UInt8]) {
        guard !contextRefused else { return }
        if let context {
            guard context == open else {
                contextRefused = true
                return
            }
        } else {
            guard !open.isEmpty, open.count <= Self.maxContextBytes, InputSplit.declaresUTF8(open) else {
                contextRefused = true
                return
            }
            context = open
        }
        started(boundary)
    }

    /// The context the units of input `index` are parsed after: empty for
    /// JSON values.
    func context(of index: Int) -> [UInt8] { contexts[index] ?? [] }

    /// Whether input `index` is XML, whose units' columns are counted in
    /// characters when read (``counted(_:descriptor:path:)``).
    func holdsContext(of index: Int) -> Bool { contexts[index] != nil }

    /// `place` with its column in characters, as libxml2 counts them (the
    /// scanner counts bytes): the bytes before the unit on its line, read
    /// from `descriptor`, less those that continue a UTF-8 character. Costs
    /// one `pread(2)` of those bytes; none for a unit at a line's start.
    static func counted(_ place: Place, descriptor: Int32, path: String) throws(ImportError) -> Place {
        guard place.column > 1 else { return place }
        let before = place.column - 1
        let continuations = withUnsafeTemporaryAllocation(byteCount: before, alignment: 1) { bytes in
            Result { () throws(ImportError) in
                try read(descriptor, path: path, into: bytes, at: place.start - Int64(before))
                return bytes.reduce(0) { $0 + ($1 & 0xC0 == 0x80 ? 1 : 0) }
            }
        }
        var counted = place
        counted.column -= try continuations.get()
        return counted
    }
}
