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
    @exclusivity(unchecked) private var boundaries: [(boundary: UnitBoundary, context: UnitContext)] = []
    /// Why the scanner could not cut the current input after all (XML in
    /// UTF-16): it is then parsed whole, and the run's digests are not
    /// trusted (``ImportPipeline/saveUnits()``).
    private(set) var refusal: String?

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
    }

    /// Whether only the selected units of the current input are parsed: a
    /// ``selection`` and an input the scanner cuts.
    var parsesSome: Bool { selection != nil && !parsesWhole }
    /// The scanner refused the current input: it is parsed whole.
    private var parsesWhole = false

    /// Feeds `chunk` to `parse` in pieces that end where units end, hashing
    /// each unit (its context's `open`, then its bytes) and closing it once
    /// its bytes are parsed. With a ``selection``, only the selected units
    /// are parsed (and hashed), each after `reposition` places the parser
    /// and the record numbers at its start in its context; the bytes between
    /// them are not parsed. An input the scanner refuses is parsed whole.
    func feed(
        _ chunk: UnsafeRawBufferPointer, parse: (UnsafeRawBufferPointer) throws(ImportError) -> Void,
        reposition: (UnitBoundary, UnitContext) throws(ImportError) -> Void
    ) throws(ImportError) {
        boundaries.removeAll(keepingCapacity: true)
        scanner?.scan(chunk) { boundary, context in boundaries.append((boundary, context)) }
        if let refused = scanner?.refusal {
            refusal = refusal ?? "\(inputName): \(refused)"
            parsesWhole = true
            parsedAny = true
        }
        if parsesWhole { return try parse(chunk) }
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
                    try reposition(boundary, context)
                    // The unit's first bytes, cut off by the chunk before (an
                    // XML start tag), which a selective parse did not read.
                    if !context.carried.isEmpty {
                        var failure: ImportError?
                        context.carried.withUnsafeBytes { bytes in
                            do throws(ImportError) { try parse(bytes) } catch { failure = error }
                        }
                        if let failure { throw failure }
                    }
                    parsed = at
                }
                unit.begin(context)
                hashedFrom = at
            } else if inUnit {
                unit.add(UnsafeRawBufferPointer(rebasing: chunk[hashedFrom..<at]))
                try parse(UnsafeRawBufferPointer(rebasing: chunk[parsed..<at]))
                parsed = at
                try close()
            }
        }
        if inUnit { unit.add(UnsafeRawBufferPointer(rebasing: chunk[hashedFrom...])) }
        if inUnit || !selective { try parse(UnsafeRawBufferPointer(rebasing: chunk[parsed...])) }
    }

    /// Ends the input: a unit the end closes (a top-level number) is closed.
    func end() throws(ImportError) {
        let last: UnitBoundary?
        do throws(ParseError) { last = try scanner?.finish() } catch { throw .parse(error) }
        if last != nil && inUnit { try close() }
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
