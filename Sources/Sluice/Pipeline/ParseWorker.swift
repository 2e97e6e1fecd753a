import SluiceBatching
import SluiceParsers
@_spi(Machinery) import SluiceRecords

/// Whole records of one input for a ``ParseWorker``: the bytes from the
/// first byte of a top-level value (or the input's start) to the first byte
/// of the next item's (or the input's end), and where they start, so that
/// the worker's parser reports the locations and record numbers of the
/// whole input. Cut by the parse side (``ParseSide/feedWorkers(_:raw:)``).
struct ParseItem: Sendable {
    /// The input's place among the run's inputs; a worker begins a new
    /// parser when it changes.
    var input: Int
    /// The input's name, for messages and checkpoints.
    var name: String
    /// The input's format and whether it was compressed.
    var format: InputFormat
    var compressed: Bool
    /// Records up to this number are parsed but not mapped (a resume's).
    var skipThrough: Int
    /// The bytes.
    var bytes: [UInt8]
    /// Where the first value starts (its byte offset, line, column, record
    /// number); `nil` for the input's first item, which starts at its first
    /// byte (and so may begin with a byte order mark).
    var start: UnitBoundary?
    /// XML: what places a parser at ``start`` (``XMLStart``); `nil` for
    /// JSON and for an input's first item.
    var xml: XMLStart?
    /// One JSON document (record paths below its top level): what its
    /// worker parses before the item's first unit, the path to it written as
    /// JSON (its ``UnitContext/open``, `{"items":[`), empty for the input's
    /// first item; `nil` for JSON Lines and XML. Such an item's parser reads
    /// one value (``ParseWorker/parseThrough(_:with:numbering:)``).
    var documentContext: [UInt8]?
    /// Whether the next item's first unit follows these bytes: an item cut
    /// at a unit's start, not the input's last nor one ended by a read error.
    var endsAtUnit = false
    /// Whether the input ends with these bytes.
    var last: Bool
    /// What the groups cut in it carry: the input's bytes before the item,
    /// its identity (standard input's: the prefix through the chunk the
    /// item ends in), input bytes read so far and records of the earlier
    /// inputs (for progress).
    var bytesBefore: Int64
    var identity: InputIdentity?
    var rawBytes: Int64
    var recordsBefore: Int
    /// In a run that keeps record digests, the item's units
    /// (``ParseItem/Units``); `nil` otherwise.
    var units: Units?
}

/// What a worker hands the forwarder, in item order.
enum ParseResult: Sendable {
    /// Rows of the current item (a full batcher's, or the item's last).
    case group(BatchGroup)
    /// The item is parsed and its rows handed over.
    case itemDone
    /// The worker was told the input ended (``ParseWorkers/endInput()``).
    case inputEnded
    /// The digests and keys of the item's units, before its ``itemDone``
    /// (a run that keeps record digests).
    case units(UnitBatch)
    /// The digests of a hash-only item's units, in input order
    /// (``ParseWorker/hash(_:of:)``), with the item, for the check of an
    /// XML document around its units (``XMLDocumentCheck/read(_:)``).
    case digests([DigestEntry], item: ParseItem)
    /// The item failed; the worker stops.
    case failed(ImportError)
}

/// One parse thread of a run that parses on several (``ParseWorkers``): its
/// own parser, record assembler and batcher; the run's side file of large
/// values is shared. It
/// takes items from its queue in order, places its parser at each item's
/// start, parses it and cuts the rows it produced as groups onto its result
/// queue, then marks the item done. Memory: its queued item, the item being
/// parsed, the group being filled and one queued result.
final class ParseWorker: RecordSink {
    let compiled: CompiledMapping
    let options: ImportOptions
    /// The worker's rows; its counts join the report's once the run ends.
    let batcher: Batcher
    let spill: ValueSpill
    /// Items to parse (nil: the current input ended), and what came of them.
    let items: BlockingQueue<ParseItem?>
    let results: BlockingQueue<ParseResult>
    let cancelled: Flag
    /// In a run that keeps record digests: the unit being read, and the
    /// units of the item read so far.
    var unit: PendingUnit?
    var units = UnitBatch()
    private var input: (index: Int, assembler: RecordAssembler, parser: DocumentParser)?
    private var item: ParseItem?
    /// Set when the result queue refused a group: the run is stopping.
    private var refused = false

    /// A worker for `compiled` under `options`, spilling large values into
    /// the run's `spill`, stopped early by `cancelled`; hashing units under
    /// `secret` in a run that keeps record digests, its batcher reusing the
    /// arenas in `spares`.
    init(
        compiled: CompiledMapping, options: ImportOptions, spill: ValueSpill, cancelled: Flag, secret: [UInt8]?,
        spares: ArenaPool
    ) {
        unit = secret.map(PendingUnit.init)
        self.compiled = compiled
        self.options = options
        self.cancelled = cancelled
        batcher = Batcher(compiled, limits: options.batch)
        batcher.spares = spares
        self.spill = spill
        items = BlockingQueue(capacity: 1)
        results = BlockingQueue(capacity: 1)
    }

    /// The thread's loop: parses items until the queue closes or fails, or
    /// an item fails.
    func run() {
        while let next = items.pop() {
            guard let item = next else {
                guard results.push(.inputEnded) else { return }
                continue
            }
            do throws(ImportError) {
                if cancelled.isSet { throw .cancelled }
                try parse(item)
                guard results.push(.itemDone) else { return }
            } catch {
                if !refused { _ = results.push(.failed(error)) }
                return
            }
        }
    }

    /// Parses `item` and cuts its rows. O(its bytes).
    private func parse(_ item: ParseItem) throws(ImportError) {
        if let units = item.units, units.hashOnly {
            guard results.push(.digests(hash(units, of: item), item: item)) else { throw .cancelled }
            return
        }
        // XML and one JSON document: each item is a document part of its own, parsed after its context.
        if input?.index != item.input || item.format == .xml || item.documentContext != nil {
            let assembler = RecordAssembler(routes: compiled.routes, sink: self, limits: options.limits, spill: spill)
            assembler.skipThrough = item.skipThrough
            let parser = DocumentParser(
                format: item.format, handler: assembler, name: item.name, compressed: item.compressed,
                multipleValues: item.documentContext == nil, limits: options.limits)
            input = (item.input, assembler, parser)
        }
        guard let input else { return }
        self.item = item
        do throws(ParseError) {
            if let start = item.start {
                if let xml = item.xml {
                    try input.parser.place(after: xml.context, at: start, column: xml.column)
                } else if let context = item.documentContext {
                    try input.parser.place(after: context, at: start, column: start.column)
                } else {
                    // JSON Lines: a top-level value needs no context.
                    try input.parser.skip(to: start)
                }
                input.assembler.numberNext(start.ordinal)
            }
            if let units = item.units {
                try parse(units, of: item, parser: input.parser, assembler: input.assembler)
            } else {
                let fed = item.bytes.withUnsafeBytes { bytes in
                    Result { () throws(ParseError) in try input.parser.feed(bytes) }
                }
                try fed.get()
                if item.last {
                    try input.parser.finish()
                } else {
                    try Self.parseThrough(item, with: input.parser, numbering: input.assembler)
                }
            }
        } catch {
            let numbered = ParseSide.numbered(error, by: input.assembler)
            // The records before the failed one go on, as one thread hands them over.
            if let record = numbered.location.record, !refused {
                batcher.dropRows(from: record)
                guard cut(records: min(input.assembler.recordCount, record - 1)) else { throw .cancelled }
            }
            throw .parse(numbered)
        }
        if !units.isEmpty {
            guard results.push(.units(units)) else { throw .cancelled }
            units = UnitBatch()
        }
        guard cut(atEnd: item.last) else { throw .cancelled }
    }

    /// The assembler's sink: maps the record, then cuts the group if it is full.
    func record(_ tree: RecordTree, entities: [Int], deleting: [Int], ordinal: Int) throws {
        if unit != nil {
            batcher.markRecord()
            try batcher.record(tree, entities: entities, deleting: deleting, ordinal: ordinal)
            unit?.recorded(by: batcher)
        } else {
            try batcher.record(tree, entities: entities, deleting: deleting, ordinal: ordinal)
        }
        if batcher.isFull && !cut() { throw WorkerStopped() }
    }

    /// Cuts the batcher's rows with the item's checkpoint onto the result
    /// queue; `false` when the queue refused them (the run is stopping).
    /// The checkpoint counts the input's bytes before the item, or all of
    /// them `atEnd` of the input (as a single parse thread counts them),
    /// and its first `records` (by default every record read).
    private func cut(atEnd: Bool = false, records: Int? = nil) -> Bool {
        guard let item, let assembler = input?.assembler, !batcher.isEmpty else { return true }
        let records = records ?? assembler.recordCount
        let bytes = atEnd ? item.units?.inputBytes ?? item.bytesBefore + Int64(item.bytes.count) : item.bytesBefore
        let group = batcher.cut(
            checkpoint: Checkpoint(input: item.name, records: records, bytes: bytes, identity: item.identity),
            rawBytes: item.rawBytes, records: item.recordsBefore + records)
        if results.push(.group(group)) { return true }
        refused = true
        return false
    }
}

/// What ``ParseWorker/record(_:entities:deleting:ordinal:)`` throws to stop
/// the parser when the run is stopping; never reported itself.
private struct WorkerStopped: Error {}
