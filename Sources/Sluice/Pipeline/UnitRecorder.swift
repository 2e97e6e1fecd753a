import SluiceBatching
import SluiceParsers
@_spi(Machinery) import SluiceRecords

/// In a run that keeps record digests (docs/record-digests.md), the parse
/// side's companion: it cuts each input into units
/// (``RecordBoundaryScanner``), hashes each unit, feeds the parser unit by
/// unit so that the keys each record produces (``Batcher/appendRecordKeys(to:hasher:scratch:)``)
/// are those of the unit being read, and keeps the units on disk
/// (``UnitSpill``) for the run's end.
///
/// Cost per byte: the scan (7.3 instructions a byte) and SHA-256; per
/// record: its keys and one SipHash of each row it produced
/// (``PendingUnit``). In a run that parses on several threads the parse
/// side cuts units itself and the workers hash them; the recorder then
/// only holds the run's ``spill`` and ``secret``.
final class UnitRecorder {
    let spill: UnitSpill
    /// The store's digest secret, for the workers' ``PendingUnit``s.
    let secret: [UInt8]
    /// Where each unit goes once read: by default into ``spill``.
    var unitEnded: ((StoredUnit) throws(ImportError) -> Void)?
    // The hot stored properties skip the dynamic exclusivity check
    // (ARCHITECTURE.md, "Hot path"): checked, their accesses cost 29 M
    // instructions of a 20,000-event first import.
    /// The unit being read: its digest so far and its records' keys.
    @exclusivity(unchecked) private var unit: PendingUnit
    private var scanner: RecordBoundaryScanner?
    /// The units parsed, when only some are (a run that skips the units
    /// whose digests it kept), and the input being read among the run's.
    var selection: UnitSelection?
    private var input = 0
    private var inputName = ""
    /// Units of the current input seen so far (its last unit's ordinal), and
    /// whether any of them was parsed.
    private(set) var unitsSeen = 0
    private(set) var parsedAny = false
    /// Whether a unit is being read.
    @exclusivity(unchecked) private var inUnit = false
    /// The boundaries of the chunk being fed, each start with the index of
    /// its context in `contexts`, or -1 when that is empty (JSON Lines: no
    /// context stored or retained, the boundaries copied as plain values).
    @exclusivity(unchecked) private var boundaries: [(boundary: UnitBoundary, context: Int)] = []
    @exclusivity(unchecked) private var contexts: [UnitContext] = []
    /// XML or one JSON document with a selection
    /// (``feedWhole(_:parse:blank:)``): whether the input's units not
    /// selected are replaced by markers; whether one is being read,
    /// and whether its next bytes are its first; the bytes held back.
    private var blanks = false
    private var skipping = false
    private var starting = false
    private var held: [UInt8] = []
    /// Why the scanner could not cut the current input after all (XML in
    /// UTF-16): it is then parsed whole, and the run's digests are not
    /// trusted (``ImportPipeline/saveUnits()``).
    private(set) var refusal: String?
    /// In the hash pass of a run that skips: where each unit of a file of
    /// JSON values or of XML lies, for the probe and the parse to read only
    /// the selected ones (``UnitPositions``).
    var positions: UnitPositions?
    /// In that hash pass, XML: every unit is hashed and fed to `blank`, so
    /// that the parser it feeds checks the document around the units once
    /// (``feedWhole(_:parse:blank:)``), and the probe and the parse need not.
    var blanksAll = false
    /// Whether the current input's selected units were read from their
    /// places (``feedPlaced(_:_:_:first:last:context:parse:reposition:)``).
    private var placed = false

    /// A recorder keying its digests with `secret`, spilling in `directory`.
    init(secret: [UInt8], directory: String) {
        self.secret = secret
        unit = PendingUnit(secret: secret)
        spill = UnitSpill(directory: directory)
    }

    /// Starts the input called `name`: its units are the records of
    /// `compiled`'s paths (`multipleValues` as its parser reads it).
    func begin(name: String, input: Int, compiled: CompiledMapping, multipleValues: Bool) throws(ImportError) {
        self.input = input
        unitsSeen = 0
        parsedAny = false
        parsesWhole = false
        do {
            inputName = name
            scanner = try RecordBoundaryScanner(
                paths: compiled.routes.map(\.path), kind: compiled.documentKind, multipleValues: multipleValues,
                name: name)
        } catch {
            throw .usage("\(name): \(error)")
        }
        inUnit = false
        blanks = compiled.documentKind == .xml || !multipleValues
        skipping = false
        placed = false
        held.removeAll()
    }

    /// Whether only the selected units of the current input are parsed: a
    /// ``selection`` and an input the scanner cuts.
    var parsesSome: Bool { selection != nil && !parsesWhole }
    /// Whether the parser was fed a whole document, to be finished at the
    /// input's end: all of it, XML or one JSON document with its units
    /// replaced by markers, or JSON Lines with a unit parsed (a JSON Lines
    /// parse fed no unit has nothing to finish). XML read from its units'
    /// places is not: the hash pass checked the document around them.
    var fedDocument: Bool { placed ? !blanks && parsedAny : !parsesSome || blanks || parsedAny }
    /// The scanner refused the current input: it is parsed whole.
    private var parsesWhole = false

    /// Feeds `chunk` to `parse` in pieces that end where units end, hashing
    /// each unit (its context's `open`, then its bytes) and closing it once
    /// its bytes are parsed. With a ``selection``, only the selected units
    /// are parsed (and hashed). JSON Lines: each after `reposition` places
    /// the parser and the record numbers at its start; the bytes between
    /// them are not parsed. XML and one JSON document: every byte is
    /// parsed, the units not selected replaced by `blank` (its flags: the
    /// piece is the unit's first, its last), so that the document around
    /// them is checked as a full parse checks it; a start tag's first bytes
    /// that the chunk's end leaves
    /// undecided are held back until the next chunk says whose they are. An
    /// input the scanner refuses is parsed whole.
    func feed(
        _ chunk: UnsafeRawBufferPointer, parse: (UnsafeRawBufferPointer) throws(ImportError) -> Void,
        blank: (UnsafeRawBufferPointer, Bool, Bool) throws(ImportError) -> Void,
        reposition: (UnitBoundary, UnitContext) throws(ImportError) -> Void
    ) throws(ImportError) {
        boundaries.removeAll(keepingCapacity: true)
        contexts.removeAll(keepingCapacity: true)
        scanner?.scan(chunk) { boundary, context in
            guard boundary.kind == .start && !context.isEmpty else { return boundaries.append((boundary, -1)) }
            boundaries.append((boundary, contexts.count))
            contexts.append(context)
        }
        if let refused = scanner?.refusal {
            refusal = refusal ?? "\(inputName): \(refused)"
            parsesWhole = true
            parsedAny = true
        }
        if parsesWhole {
            try flushHeld(parse)
            return try parse(chunk)
        }
        if (selection != nil || blanksAll) && blanks { return try feedWhole(chunk, parse: parse, blank: blank) }
        let selective = selection != nil
        var parsed = 0
        var hashedFrom = 0
        for (boundary, context) in boundaries {
            let at = boundary.offsetInChunk
            if boundary.kind == .start {
                unitsSeen = boundary.ordinal
                inUnit = selection?.contains(input: input, ordinal: boundary.ordinal) ?? true
                guard inUnit else { continue }
                parsedAny = true
                if selective {
                    try reposition(boundary, context < 0 ? UnitContext() : contexts[context])
                    parsed = at
                }
                unit.begin(context < 0 ? nil : contexts[context])
                if let positions, context < 0 { positions.started(boundary) }
                hashedFrom = at
            } else if inUnit {
                unit.add(UnsafeRawBufferPointer(rebasing: chunk[hashedFrom..<at]))
                try parse(UnsafeRawBufferPointer(rebasing: chunk[parsed..<at]))
                parsed = at
                try notePlace(end: boundary.byteOffset)
                try close()
            }
        }
        if inUnit { unit.add(UnsafeRawBufferPointer(rebasing: chunk[hashedFrom...])) }
        if inUnit || !selective { try parse(UnsafeRawBufferPointer(rebasing: chunk[parsed...])) }
    }

    /// ``feed(_:parse:blank:reposition:)`` of XML or one JSON document
    /// with a selection: every
    /// byte to the parser, the selected units as they are (and hashed), the
    /// others to `blank`; with ``blanksAll``, every unit hashed and to
    /// `blank`, its place kept.
    private func feedWhole(
        _ chunk: UnsafeRawBufferPointer, parse: (UnsafeRawBufferPointer) throws(ImportError) -> Void,
        blank: (UnsafeRawBufferPointer, Bool, Bool) throws(ImportError) -> Void
    ) throws(ImportError) {
        var fed = 0
        var hashedFrom = 0
        for (boundary, context) in boundaries {
            let at = boundary.offsetInChunk
            if boundary.kind == .start {
                unitsSeen = boundary.ordinal
                inUnit = selection?.contains(input: input, ordinal: boundary.ordinal) ?? true
                skipping = blanksAll || !inUnit
                starting = true
                let carried = context >= 0 && !contexts[context].carried.isEmpty
                if !carried {
                    try flushHeld(parse)
                    try parse(UnsafeRawBufferPointer(rebasing: chunk[fed..<at]))
                    fed = at
                }
                // A unit's carried first bytes are those held back.
                try feedUnit(held, parse: parse, blank: blank, ends: false)
                held.removeAll(keepingCapacity: true)
                guard inUnit else { continue }
                parsedAny = true
                unit.begin(context < 0 ? nil : contexts[context])
                if let positions { positions.started(boundary, context: context < 0 ? [] : contexts[context].open) }
                hashedFrom = at
            } else if inUnit || skipping {
                try feedUnit(UnsafeRawBufferPointer(rebasing: chunk[fed..<at]), parse: parse, blank: blank, ends: true)
                fed = at
                skipping = false
                if inUnit {
                    unit.add(UnsafeRawBufferPointer(rebasing: chunk[hashedFrom..<at]))
                    try notePlace(end: boundary.byteOffset)
                    try close()
                }
            }
        }
        let rest = UnsafeRawBufferPointer(rebasing: chunk[fed...])
        if inUnit || skipping {
            if inUnit { unit.add(UnsafeRawBufferPointer(rebasing: chunk[hashedFrom...])) }
            return try feedUnit(rest, parse: parse, blank: blank, ends: false)
        }
        // Bytes that may begin a unit wait for the next chunk.
        let hold = min(scanner?.undecided ?? 0, held.count + rest.count)
        let sure = held.count + rest.count - hold
        if sure >= held.count {
            let fromRest = sure - held.count
            try flushHeld(parse)
            try parse(UnsafeRawBufferPointer(rebasing: rest[..<fromRest]))
            held.append(contentsOf: rest[fromRest...])
        } else {
            try Self.withBytes(Array(held[..<sure]), parse)
            held.removeFirst(sure)
            held.append(contentsOf: rest)
        }
    }

    /// Feeds bytes of the current unit: as they are when it is selected,
    /// else (and with ``blanksAll``) blanked.
    private func feedUnit(
        _ bytes: UnsafeRawBufferPointer, parse: (UnsafeRawBufferPointer) throws(ImportError) -> Void,
        blank: (UnsafeRawBufferPointer, Bool, Bool) throws(ImportError) -> Void, ends: Bool
    ) throws(ImportError) {
        if !skipping { return try parse(bytes) }
        guard bytes.count > 0 || ends else { return }
        try blank(bytes, starting, ends)
        starting = false
    }

    private func feedUnit(
        _ bytes: [UInt8], parse: (UnsafeRawBufferPointer) throws(ImportError) -> Void,
        blank: (UnsafeRawBufferPointer, Bool, Bool) throws(ImportError) -> Void, ends: Bool
    ) throws(ImportError) {
        try Self.withBytes(bytes) { buffer throws(ImportError) in
            try feedUnit(buffer, parse: parse, blank: blank, ends: ends)
        }
    }

    /// Parses the bytes held back at the end of the last chunk (at the end
    /// of the input, or once they are known to begin no unit).
    func flushHeld(_ parse: (UnsafeRawBufferPointer) throws(ImportError) -> Void) throws(ImportError) {
        guard !held.isEmpty else { return }
        try Self.withBytes(held, parse)
        held.removeAll(keepingCapacity: true)
    }

    /// Runs `body` over the bytes of `array`.
    private static func withBytes(
        _ array: [UInt8], _ body: (UnsafeRawBufferPointer) throws(ImportError) -> Void
    ) throws(ImportError) {
        var failure: ImportError?
        array.withUnsafeBytes { bytes in
            do throws(ImportError) { try body(bytes) } catch { failure = error }
        }
        if let failure { throw failure }
    }

    /// Ends the input: a unit the end closes (a top-level number) is closed.
    func end() throws(ImportError) {
        let last: UnitBoundary?
        do throws(ParseError) { last = try scanner?.finish() } catch { throw .parse(error) }
        if let last, inUnit {
            try notePlace(end: last.byteOffset)
            try close()
        }
        scanner = nil
    }

    /// Records where the unit being read ends, in a hash pass that keeps
    /// the units' places.
    private func notePlace(end: Int64) throws(ImportError) {
        guard let positions else { return }
        do { try positions.ended(at: end) } catch { throw .spill(error) }
    }

    /// Feeds a piece of a selected unit read from its place
    /// (``UnitPositions/forEachSelected(input:path:selection:chunkSize:_:)``)
    /// rather than found by the scanner: on its `first` piece `reposition`
    /// places the parser and the record numbers at unit `ordinal`'s
    /// `place`; each piece is hashed (after `context`, an XML unit's:
    /// ``UnitPositions/context(of:)``) and parsed; the `last` closes the unit.
    func feedPlaced(
        _ ordinal: Int, _ place: UnitPositions.Place, _ piece: UnsafeRawBufferPointer, first: Bool, last: Bool,
        context: [UInt8], parse: (UnsafeRawBufferPointer) throws(ImportError) -> Void,
        reposition: (Int, UnitPositions.Place) throws(ImportError) -> Void
    ) throws(ImportError) {
        if first {
            unitsSeen = ordinal
            inUnit = true
            parsedAny = true
            placed = true
            try reposition(ordinal, place)
            unit.begin(context.isEmpty ? nil : UnitContext(open: context))
        }
        unit.add(piece)
        try parse(piece)
        if last { try close() }
    }

    /// Ends an input read from the places of its selected units: it had
    /// `units` units; the scanner, which read none of it, is not asked.
    func endPlaced(units: Int) {
        unitsSeen = units
        placed = true
        scanner = nil
    }

    /// After each record: the keys it produced join the unit's.
    func recorded(by batcher: Batcher) {
        unit.recorded(by: batcher)
    }

    private func close() throws(ImportError) {
        inUnit = false
        let stored = StoredUnit(digest: unit.end(), keys: unit.keys, pinned: false)
        if let unitEnded { return try unitEnded(stored) }
        do {
            try spill.add(stored)
        } catch {
            throw .spill(error)
        }
    }
}
