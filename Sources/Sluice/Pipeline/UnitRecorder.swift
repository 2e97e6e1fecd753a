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
/// record: its keys and one keyed hash of each row it produced.
final class UnitRecorder {
    let spill: UnitSpill
    private var hasher: UnitHasher
    private var scanner: RecordBoundaryScanner?
    /// The unit being read: whether one is, and the keys of its records.
    private var inUnit = false
    private var keys: [UInt8] = []
    private var scratch: [UInt8] = []
    private var boundaries: [(boundary: UnitBoundary, open: [UInt8])] = []

    /// A recorder keying its digests with `secret`, spilling in `directory`.
    init(secret: [UInt8], directory: String) {
        hasher = UnitHasher(secret: secret)
        spill = UnitSpill(directory: directory)
    }

    /// Starts the input called `name`: its units are the records of
    /// `compiled`'s paths (`multipleValues` as its parser reads it).
    func begin(name: String, compiled: CompiledMapping, multipleValues: Bool) throws(ImportError) {
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
    /// each unit and closing it once its bytes are parsed.
    func feed(
        _ chunk: UnsafeRawBufferPointer, parse: (UnsafeRawBufferPointer) throws(ImportError) -> Void
    ) throws(ImportError) {
        boundaries.removeAll(keepingCapacity: true)
        scanner?.scan(chunk) { boundary, context in
            boundaries.append((boundary, boundary.kind == .start ? context.open : []))
        }
        var parsed = 0
        var hashedFrom = 0
        for (boundary, open) in boundaries {
            let at = boundary.offsetInChunk
            if boundary.kind == .start {
                hasher.begin()
                open.withUnsafeBytes { hasher.add($0) }
                keys.removeAll(keepingCapacity: true)
                inUnit = true
                hashedFrom = at
            } else {
                hasher.add(UnsafeRawBufferPointer(rebasing: chunk[hashedFrom..<at]))
                try parse(UnsafeRawBufferPointer(rebasing: chunk[parsed..<at]))
                parsed = at
                try close()
            }
        }
        if inUnit { hasher.add(UnsafeRawBufferPointer(rebasing: chunk[hashedFrom...])) }
        try parse(UnsafeRawBufferPointer(rebasing: chunk[parsed...]))
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
        batcher.appendRecordKeys(to: &keys, hasher: &hasher, scratch: &scratch)
    }

    private func close() throws(ImportError) {
        inUnit = false
        let digest = hasher.end()
        do {
            try spill.add(StoredUnit(digest: digest, keys: keys, pinned: false))
        } catch {
            throw .spill(error)
        }
    }
}
