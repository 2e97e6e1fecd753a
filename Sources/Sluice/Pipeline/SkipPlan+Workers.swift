import SluiceBatching
import SluiceInput
@_spi(Machinery) import SluiceRecords

/// The hash pass of a run that skips, on the parse workers
/// (``ParseWorkers``): this thread reads the input and cuts it into units
/// with the one ``RecordBoundaryScanner``, noting their places, and hands
/// items of whole units to the workers, which hash them
/// (``ParseWorker/hash(_:of:)``); their forwarder adds the digests to the
/// pass's sorter in input order, as one thread adds them, and has an XML
/// file's document check read each item (``XMLDocumentCheck/read(_:)``).
extension SkipPlan {

    /// Reads input `index`, cutting it into units whose bytes `workers`
    /// hash into `sorter`; each unit's place goes to `positions` (a
    /// placeable input) and its ordinal to `units` as it starts. Returns once
    /// every unit's digest is in `sorter`, with the input's compression;
    /// `refused` says why the scanner could not cut it (XML in UTF-16),
    /// which leaves its units unhashed. Cost on this thread: the read, the
    /// scan and one copy of the input's bytes; the workers' queues hold one
    /// item each.
    ///
    /// - Throws: what a read of the input, the document check (XML), the
    ///   scanner's end (an input that ends inside a unit) or a worker
    ///   throws, once the workers have hashed every unit before it.
    func hashOnWorkers(
        _ input: PlannedInput, index: Int, workers: ParseWorkers, into sorter: DigestSorter,
        positions: UnitPositions?, units: inout Int, refused: inout String?
    ) throws(ImportError) -> Compression {
        var scanner: RecordBoundaryScanner
        do {
            scanner = try RecordBoundaryScanner(
                paths: compiled.routes.map(\.path), kind: compiled.documentKind,
                multipleValues: multipleValues(input.format), name: input.name)
        } catch {
            throw .usage("\(input.name): \(error)")
        }
        var cut = HashCut(input: index, name: input.name, format: input.format, itemBytes: workers.itemBytes)
        let check = documentCheck(input)
        workers.hashInto(sorter, checking: check)
        var seen = 0
        do throws(ImportError) {
            let compression = try read(input) { chunk throws(ImportError) in
                guard refused == nil else { return }
                var from = 0
                defer { units = seen }
                try scanner.scan(chunk) { boundary, context throws(ImportError) in
                    let at = boundary.offsetInChunk
                    guard boundary.kind == .start else {
                        cut.ended(at: cut.pending.count + at - from)
                        return try Self.ended(at: boundary.byteOffset, positions)
                    }
                    seen = boundary.ordinal
                    // An item starts at a unit's first byte: not at an XML start tag an earlier chunk began.
                    if cut.pending.count + at - from >= cut.itemBytes && context.carried.isEmpty {
                        cut.pending.append(contentsOf: UnsafeRawBufferPointer(rebasing: chunk[from..<at]))
                        from = at
                        try workers.dispatch(cut.item())
                    }
                    cut.started(boundary, at: cut.pending.count + at - from - context.carried.count, open: context.open)
                    if check != nil {
                        positions?.started(boundary, context: context.open)
                    } else if context.isEmpty {
                        positions?.started(boundary)
                    }
                }
                if let refusal = scanner.refusal {
                    refused = "\(input.name): \(refusal)"
                    return cut.discard()
                }
                cut.pending.append(contentsOf: UnsafeRawBufferPointer(rebasing: chunk[from...]))
            }
            var failure: ParseError?
            var last: UnitBoundary?
            do throws(ParseError) { last = try scanner.finish() } catch { failure = error }
            if let last, cut.open {
                cut.ended(at: cut.pending.count)
                try Self.ended(at: last.byteOffset, positions)
            }
            try handOver(cut.item(), to: workers)
            // As on one thread: the check's errors first, then its end's, then the scanner's.
            if let check, refused == nil {
                if let failure = check.failure { throw failure }
                try check.finish()
            }
            if let failure { throw .parse(failure) }
            return compression
        } catch {
            // The units read before a read error are hashed, as one thread hashes them.
            if case .input = error { try handOver(cut.item(), to: workers) }
            throw error
        }
    }

    /// Hands the input's last `item` to `workers` and waits until every
    /// item's digests are in the pass's sorter.
    private func handOver(_ item: ParseItem, to workers: ParseWorkers) throws(ImportError) {
        try workers.dispatch(item)
        try workers.endInput()
        workers.hashInto(nil)
    }

    /// Records where the unit started last ends, in `positions`.
    private static func ended(at end: Int64, _ positions: UnitPositions?) throws(ImportError) {
        do throws(SpillError) { try positions?.ended(at: end) } catch { throw .spill(error) }
    }
}

/// The item being cut by ``SkipPlan/hashOnWorkers(_:index:workers:into:positions:units:refused:)``:
/// whole units' bytes and their spans.
private struct HashCut {
    let input: Int
    let name: String
    let format: InputFormat
    let itemBytes: Int
    var pending: [UInt8] = []
    var spans: [ParseItem.UnitSpan] = []
    /// Whether the last unit started has not ended.
    var open = false

    init(input: Int, name: String, format: InputFormat, itemBytes: Int) {
        self.input = input
        self.name = name
        self.format = format
        self.itemBytes = itemBytes
        pending.reserveCapacity(itemBytes + ParseWorkers.itemSlack)
    }

    /// A unit starts at `offset` in the pending bytes, after `open`.
    mutating func started(_ boundary: UnitBoundary, at offset: Int, open context: [UInt8]) {
        var start = boundary
        start.offsetInChunk = offset
        spans.append(ParseItem.UnitSpan(start: start, open: context))
        open = true
    }

    /// Drops the pending bytes and units: the input will not be cut.
    mutating func discard() {
        pending = []
        spans.removeAll()
        open = false
    }

    /// The unit started last ends at `offset` in the pending bytes.
    mutating func ended(at offset: Int) {
        guard open, let last = spans.indices.last else { return }
        spans[last].end = offset
        open = false
    }

    /// The pending bytes and their units as an item to hash, the pending
    /// ones emptied.
    mutating func item() -> ParseItem {
        var units = ParseItem.Units(selective: false)
        units.spans = spans
        units.hashOnly = true
        let item = ParseItem(
            input: input, name: name, format: format, compressed: false, skipThrough: 0, bytes: pending, start: nil,
            xml: nil, documentContext: nil, last: false, bytesBefore: 0, identity: nil, rawBytes: 0, recordsBefore: 0,
            units: units)
        pending = []
        pending.reserveCapacity(itemBytes + ParseWorkers.itemSlack)
        spans.removeAll(keepingCapacity: true)
        return item
    }
}
