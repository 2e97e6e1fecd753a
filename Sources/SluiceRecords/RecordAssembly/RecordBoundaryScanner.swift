import SluiceParsers

/// Where a unit of the input starts or ends within the chunk that
/// ``RecordBoundaryScanner/scan(_:_:)`` was given.
package struct UnitBoundary: Sendable, Equatable {
    /// Whether the unit starts or ends here.
    package enum Kind: Sendable, Equatable {
        case start, end
    }

    /// A start or an end.
    package var kind: Kind
    /// A start: where the unit's bytes in this chunk begin: its first byte,
    /// unless its first bytes were at the end of the previous chunk (then 0,
    /// and those are ``UnitContext/carried``). An end: the offset just past
    /// its last byte (it may equal the chunk's length).
    package var offsetInChunk: Int
    /// A start: the unit's first byte in the whole input (decompressed).
    /// An end: the offset just past its last byte.
    package var byteOffset: Int64
    /// A start: the 1-based line of its first byte (lines end at `\n`).
    /// An end: 0.
    package var line: Int
    /// A start: the 1-based column of its first byte, in bytes from the line's
    /// start (as the JSON parser counts it). An end: 0.
    package var column: Int
    /// The unit's 1-based number in the input, on its start and its end.
    package var ordinal: Int
}

/// Why the scanner does not handle a set of record paths: the caller reads
/// and parses the whole input, and can say why.
package struct BoundaryScanRefusal: Error, Sendable, Equatable, CustomStringConvertible {
    /// The reason, e.g. `the XML document is in UTF-16 or UTF-32`.
    package let description: String
    init(_ description: String) { self.description = description }
}

/// Finds the byte range of each *unit* of an input without parsing values,
/// so that a later run can hash each unit and parse only the units whose hash
/// is new (and a parallel parse can hand units to worker threads).
///
/// A unit, parsed alone between its ``UnitContext``'s `open` and `close`, with
/// the same record paths and the same `multipleValues` as the whole input, gives
/// exactly the records the whole input gives for those bytes, in order:
///
/// - JSON with `multipleValues` (JSON Lines, or a `$` path): each top-level
///   value, which may span lines; the context is empty.
/// - JSON with one top-level value: each value that a record path reaches
///   (an element of the array at `$[*]` or `$.key[*]`, the value of `$.key`),
///   outside any other unit; the context is the path written as JSON
///   (`{"key":[` and `]}`), one per path.
/// - XML: each element that a record path reaches (by local name, as the
///   assembler matches), outside any other unit, from the `<` of its start
///   tag to the end of its end tag or `/>`; the context is what can change
///   its meaning: the XML declaration (encoding), the DOCTYPE with its
///   internal subset (entities, attribute types), and the start tags of its
///   open ancestors (namespace declarations, `xml:space`, `xml:lang`),
///   closed after it by their end tags. Elements of any paths, nested or at
///   other depths, are units: each one's context puts it on its own path.
///
/// Bytes between a start and its end, possibly over several chunks, are the
/// unit (an XML start tag that a chunk cut before its name ended is carried:
/// ``UnitContext/carried``); nothing else is held but the ancestors' start
/// tags and the prolog, so a unit of any size streams through. The scanner
/// follows JSON strings and escapes, and XML comments, CDATA sections,
/// processing instructions, quoted attribute values and the DOCTYPE's
/// internal subset; on malformed input it never crashes or loops, but its
/// boundaries may be anything (a unit parsed alone then fails, as the whole
/// input would). XML in UTF-16 or UTF-32 is not scanned (``refusal``).
///
/// Cost: linear in the bytes, no allocation per chunk or unit (XML: none
/// while the ancestors stay the same). Inside a JSON unit it compares 16
/// bytes at a time with `"`, `\`, the brackets and `\n`: blocks with none
/// but quotes (most of them) go by in a tight loop that keeps only the
/// parity of their quotes; a block without a backslash settles its strings
/// at once (the bytes after an odd number of quotes are inside one) and
/// looks only at the brackets outside strings; a block with a backslash goes
/// byte of interest by byte of interest. Outside units (between JSON Lines,
/// around the array of `$.key[*]`) it reads byte by byte. Inside an XML
/// unit it finds each 64-byte block's `<`, `>` and quotes at once and looks
/// only at those (`XMLScan.skimUnit`: 6.9 instructions a byte of the XML
/// events form, all the scanner's work counted, where it was 9.9; session
/// 25); outside units it skips through tags 16 bytes at a time to the next
/// `>`, quote or `/`, with `memchr` over text, attribute values and end
/// tags. Measured before the XML skim on `events.py dataset
/// 200000` (release build, 1 MiB chunks; callgrind on the first 5 MB of each
/// form, counting the scanner and the `memchr` it calls; wall time the best
/// of several runs on the whole file, on a machine shared with other
/// builds): JSON Lines (94 MiB) 3.5 instructions a byte, 1.8 GB/s on one
/// core; the JSON array (`$[*]`) 3.6, 1.7 GB/s; the XML form (97 MiB) 8.4,
/// 0.85 GB/s. Swift has no movemask, so JSON's masks stay a byte per input
/// byte (two 64-bit lanes a block).
package struct RecordBoundaryScanner {
    private var json: JSONScan?
    private var xml: XMLScan?
    private var position: ScanPosition

    /// A scanner for the records at `paths` in a document of `kind`, the
    /// input called `name` (for messages); `multipleValues` (JSON only) as
    /// the JSON parser is given it (JSON Lines, or a `$` path). `skims`
    /// (XML only): whether the bytes inside a unit are read 64 at a time;
    /// `false` is the plain path that the tests compare the skim with.
    ///
    /// - Throws: ``BoundaryScanRefusal`` for shapes it does not handle: no
    ///   paths, paths of the other document kind, more than 64 paths (the
    ///   record assembler's masks).
    package init(
        paths: [RecordPath], kind: DocumentKind, multipleValues: Bool, name: String, skims: Bool = true
    ) throws(BoundaryScanRefusal) {
        position = ScanPosition(name: name)
        guard !paths.isEmpty else { throw BoundaryScanRefusal("no record paths") }
        guard paths.count <= 64 else { throw BoundaryScanRefusal("more than 64 record paths") }
        if let other = paths.first(where: { $0.kind != kind }) {
            throw BoundaryScanRefusal("record path \(other) does not address \(kind.rawValue)")
        }
        switch kind {
        case .json: json = JSONScan(paths: paths, multipleValues: multipleValues)
        case .xml: xml = XMLScan(paths: paths, skims: skims)
        }
    }

    /// Scans the next chunk of (decompressed) bytes and hands each unit
    /// boundary in it to `body`, in order, with the context of the unit it
    /// starts or ends (valid as long as the caller keeps it: the arrays are
    /// the scanner's, shared, not copied). Rethrows what `body` throws; the
    /// rest of the chunk is then unscanned, and the scanner of no more use.
    package mutating func scan<E: Error>(
        _ chunk: UnsafeRawBufferPointer, _ body: (UnitBoundary, UnitContext) throws(E) -> Void
    ) throws(E) {
        if let base = chunk.baseAddress, chunk.count > 0 {
            let bytes = base.assumingMemoryBound(to: UInt8.self)
            try json?.scan(bytes, count: chunk.count, position: &position, body)
            try xml?.scan(bytes, count: chunk.count, position: &position, body)
        }
        position.chunkStart += Int64(chunk.count)
    }

    /// Ends the input. Returns the end of a unit that the end of the input
    /// ends (a top-level number): its `byteOffset` is the input's length, its
    /// `offsetInChunk` 0.
    ///
    /// - Throws: ``ParseError`` when the input ends inside a unit or inside a
    ///   structure around units (an unclosed string, object or array).
    package mutating func finish() throws(ParseError) -> UnitBoundary? {
        if let xml { return try xml.finish(position: position) }
        return try json?.finish(position: position)
    }

    /// How many bytes at the end of what was scanned may be the first bytes
    /// of a unit: an XML start tag outside units whose name the chunk cut.
    /// If its name puts it on a path, they are the next start's
    /// ``UnitContext/carried``; else they are no unit's. JSON: 0.
    package var undecided: Int { xml?.undecided(before: position.chunkStart) ?? 0 }

    /// Why the input cannot be scanned after all, once its first bytes show
    /// it (XML in UTF-16): the scanner then reports no more boundaries, and
    /// every unit must be parsed. `nil` while it can.
    package var refusal: BoundaryScanRefusal? { xml?.refusal }
}

/// What a unit needs around it to be parsed alone as it is read in the
/// whole input: `open` before it, `close` after it.
package struct UnitContext: Sendable, Equatable {
    /// The bytes before the unit (JSON: the path to it, `{"key":[`; XML: the
    /// declaration, the DOCTYPE and the open ancestors' start tags).
    package var open: [UInt8] = []
    /// The bytes after the unit, closing `open` (`]}`; the ancestors' end tags).
    package var close: [UInt8] = []
    /// The unit's first bytes when they were in an earlier chunk (an XML
    /// start tag whose name a chunk cut): they come before the unit's bytes
    /// in the chunk of its start.
    package var carried: [UInt8] = []

    /// A context; none (the default) is what a top-level value needs.
    package init(open: [UInt8] = [], close: [UInt8] = [], carried: [UInt8] = []) {
        self.open = open
        self.close = close
        self.carried = carried
    }

    /// Whether it has no bytes at all (a top-level value's).
    package var isEmpty: Bool { open.isEmpty && close.isEmpty && carried.isEmpty }
}

/// How far a scan has come: the input offset of the current chunk, the
/// lines so far, the units so far.
struct ScanPosition {
    /// The input's name, for messages.
    let name: String
    /// The input offset of the chunk being scanned.
    var chunkStart: Int64 = 0
    /// Newlines before the current byte.
    var newlines = 0
    /// The input offset just past the last newline (the current line's start).
    var lineStart: Int64 = 0
    /// Units started so far.
    var ordinal = 0

    /// Counts a newline at `offset` in the chunk.
    @inline(__always)
    mutating func newline(at offset: Int) {
        newlines += 1
        lineStart = chunkStart + Int64(offset) + 1
    }

    /// Counts a unit starting at `offset` in the chunk and says where; its
    /// first byte is at `absolute` in the input (earlier than the chunk when
    /// its first bytes are carried).
    mutating func start(at offset: Int, absolute: Int64? = nil) -> UnitBoundary {
        ordinal += 1
        let absolute = absolute ?? chunkStart + Int64(offset)
        return UnitBoundary(
            kind: .start, offsetInChunk: offset, byteOffset: absolute, line: newlines + 1,
            column: Int(absolute - lineStart) + 1, ordinal: ordinal)
    }

    /// The end of the current unit just before `offset` in the chunk.
    func end(at offset: Int) -> UnitBoundary {
        UnitBoundary(
            kind: .end, offsetInChunk: offset, byteOffset: chunkStart + Int64(offset), line: 0, column: 0,
            ordinal: ordinal)
    }

    /// The location of the end of the input, for ``ParseError``.
    func endLocation() -> SourceLocation {
        SourceLocation(
            file: name, line: newlines + 1, column: Int(chunkStart - lineStart) + 1, byteOffset: chunkStart,
            record: ordinal > 0 ? ordinal : nil)
    }
}
