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
/// record: its keys and one SipHash of each row it produced.
final class UnitRecorder {
    let spill: UnitSpill
    /// Where each unit goes once read: by default into ``spill``.
    var unitEnded: ((StoredUnit) throws(ImportError) -> Void)?
    private var hasher: UnitHasher
    /// Hashes what a unit's records contribute to each key.
    private let contributions: ContributionHasher
    private var scanner: RecordBoundaryScanner?
    /// The units parsed, when only some are (a run that skips the units
    /// whose digests it kept), and the input being read among the run's.
    var selection: UnitSelection?
    private var input = 0
    /// Units of the current input seen so far (its last unit's ordinal), and
    /// whether any of them was parsed.
    private(set) var unitsSeen = 0
    private(set) var parsedAny = false
    /// The unit being read: whether one is, and the keys of its records.
    private var inUnit = false
    private var keys: [UInt8] = []
    private var scratch: [UInt8] = []
    private var boundaries: [(boundary: UnitBoundary, open: [UInt8])] = []

    /// A recorder keying its digests with `secret`, spilling in `directory`.
    init(secret: [UInt8], directory: String) {
        hasher = UnitHasher(secret: secret)
        contributions = ContributionHasher(secret: secret)
        spill = UnitSpill(directory: directory)
    }

    /// Starts the input called `name`: its units are the records of
    /// `compiled`'s paths (`multipleValues` as its parser reads it).
    func begin(name: String, input: Int, compiled: CompiledMapping, multipleValues: Bool) throws(ImportError) {
        self.input = input
        unitsSeen = 0
        parsedAny = false
        do {
            scanner = try RecordBoundaryScanner(
                paths: compiled.routes.map(\.path), kind: compiled.documentKind, multipleValues: multipleValues,
                name: name)
        } catch {
            throw .usage("\(name): \(error)")
        }
        inUnit = false
    }

    /// Feeds `chunk` to `parse` in pieces that end where units end, hashing
    /// each unit and closing it once its bytes are parsed. With a
    /// ``selection``, only the selected units are parsed (and hashed), each
    /// after `reposition` places the parser and the record numbers at its
    /// start; the bytes between them are not parsed.
    func feed(
        _ chunk: UnsafeRawBufferPointer, parse: (UnsafeRawBufferPointer) throws(ImportError) -> Void,
        reposition: (UnitBoundary) throws(ImportError) -> Void
    ) throws(ImportError) {
        boundaries.removeAll(keepingCapacity: true)
        scanner?.scan(chunk) { boundary, context in
            boundaries.append((boundary, boundary.kind == .start ? context.open : []))
        }
        let selective = selection != nil
        var parsed = 0
        var hashedFrom = 0
        for (boundary, open) in boundaries {
            let at = boundary.offsetInChunk
            if boundary.kind == .start {
                unitsSeen = boundary.ordinal
                inUnit = selection?.contains(input: input, ordinal: boundary.ordinal) ?? true
                guard inUnit else { continue }
                parsedAny = true
                if selective {
                    try reposition(boundary)
                    parsed = at
                }
                hasher.begin()
                open.withUnsafeBytes { hasher.add($0) }
                keys.removeAll(keepingCapacity: true)
                hashedFrom = at
            } else if inUnit {
                hasher.add(UnsafeRawBufferPointer(rebasing: chunk[hashedFrom..<at]))
                try parse(UnsafeRawBufferPointer(rebasing: chunk[parsed..<at]))
                parsed = at
                try close()
            }
        }
        if inUnit { hasher.add(UnsafeRawBufferPointer(rebasing: chunk[hashedFrom...])) }
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
        batcher.appendRecordKeys(to: &keys, hasher: contributions, scratch: &scratch)
    }

    private func close() throws(ImportError) {
        inUnit = false
        let digest = hasher.end()
        let unit = StoredUnit(digest: digest, keys: keys, pinned: false)
        if let unitEnded { return try unitEnded(unit) }
        do {
            try spill.add(unit)
        } catch {
            throw .spill(error)
        }
    }
}
