import SluiceBatching
import SluiceInput
import SluiceParsers
@_spi(Machinery) import SluiceRecords

/// What a ``SkipPlan`` learns from the units it selected: the keys they
/// produce, and whether what they contribute to each agrees.
extension SkipPlan {
    /// Parses the selected units of `inputs` without writing them; returns
    /// the keys they produce with their contributions (``ProbedKeys``: the
    /// first ``ProbedKeys/maxHeld`` held, the others spilled), or nil when a
    /// unit does not parse (the run then parses every unit, and meets the
    /// error where a full run would).
    /// Values over ``ValueSpill/threshold`` go to a side file of the probe's
    /// own, as in the run's parse: held in memory (the record tree, then its
    /// row), a changed record of one 45 MiB field made the next day's run of
    /// six such records peak at 213 MiB against the first import's 132, and
    /// into PostgreSQL three records of two 14 MiB fields, one changed, at
    /// 102 MB against 45 (`LargeRecordMemoryTests`).
    func probe(_ inputs: [PlannedInput]) throws(ImportError) -> ProbedKeys? {
        let keys = ProbedKeys(directory: directory, secret: secret)
        let spill = ValueSpill(directory: directory)
        for (index, input) in inputs.enumerated() where hasSelected(input: index) {
            let sink = ProbeSink(compiled, options)
            let multiple = multipleValues(input.format)
            let assembler = RecordAssembler(
                routes: compiled.routes, sink: sink, limits: options.limits, spill: spill)
            let parser = DocumentParser(
                format: input.format, handler: assembler, name: input.name, compressed: false,
                multipleValues: multiple, limits: options.limits)
            let recorder = UnitRecorder(secret: secret, directory: directory)
            recorder.selection = selection
            recorder.unitEnded = { unit throws(ImportError) in
                var failure: SpillError?
                _ = UnitKeys.forEach(unit.keys, digest: unit.digest) { entry in
                    do throws(SpillError) { try keys.add(entry) } catch { failure = failure ?? error }
                }
                if let failure { throw .spill(failure) }
            }
            sink.recorder = recorder
            try recorder.begin(name: input.name, input: index, compiled: compiled, multipleValues: multiple)
            let parse = { (piece: UnsafeRawBufferPointer) throws(ImportError) in
                do throws(ParseError) { try parser.feed(piece) } catch { throw .parse(error) }
            }
            let reposition = { (unit: UnitBoundary, _: UnitContext) throws(ImportError) in
                do throws(ParseError) { try parser.skip(to: unit) } catch { throw .parse(error) }
                assembler.numberNext(unit.ordinal)
            }
            do throws(ImportError) {
                if let places = places(of: index) {
                    let context = places.context(of: index)
                    try places.forEachSelected(
                        input: index, path: input.name, selection: selection, chunkSize: options.chunkSize
                    ) { ordinal, place, piece, first, last throws(ImportError) in
                        try recorder.feedPlaced(
                            ordinal, place, piece, first: first, last: last, context: context, parse: parse
                        ) { ordinal, place throws(ImportError) in
                            do throws(ParseError) { try parser.place(place, after: context) } catch {
                                throw .parse(error)
                            }
                            assembler.numberNext(ordinal)
                        }
                    }
                    recorder.endPlaced(units: unitCounts[index])
                } else {
                    try read(input) { chunk throws(ImportError) in
                        try recorder.feed(
                            chunk, parse: parse,
                            blank: { piece, starts, ends throws(ImportError) in
                                do throws(ParseError) {
                                    try parser.feed(skipping: piece, starts: starts, ends: ends)
                                } catch {
                                    throw .parse(error)
                                }
                            }, reposition: reposition)
                    }
                }
                try recorder.flushHeld(parse)
                do throws(ParseError) { if recorder.fedDocument { try parser.finish() } } catch {
                    throw ImportError.parse(error)
                }
                try recorder.end()
            } catch {
                // A unit that does not parse: the run's own parse reports it.
                if case .parse = error { return nil }
                throw error
            }
        }
        return keys
    }

    /// Selects the kept units (`kept`, in digest order) that produce a key
    /// the probed units contribute something else to, and records every key
    /// whose contributions disagree as mixed (a held key as the scan meets
    /// it, looked up in ``ClosureKeys``; a spilled one found by
    /// ``ProbedKeys/closeSpilled(_:)`` once the scan has met every kept
    /// unit). In the same scan, notes every removed key a kept unit
    /// produces, dropped from ``removedKeys`` after it, and hands each kept unit's keys to
    /// `fallback` (the entities swept in proportion, when their removed keys
    /// overflowed). A kept unit whose keys do not read, or that `fallback`
    /// cannot read, is parsed. A key none of them holds is told apart in
    /// place by ``KeyFilter``s: no entry, identity or lookup of its own
    /// (nearly every key of a next day's kept units; docs/record-digests.md
    /// measures it).
    func close(
        over probed: ProbedKeys, kept sorted: SortedDigests, store: any ImportStore, fallback: SkippedKeys?
    ) throws(ImportError) {
        let probedNone = probed.isEmpty
        let keys = ClosureKeys(held: probed.held, removed: removedKeys)
        // Let go: the probe's dictionary took about 180 bytes a key, the closure's table about 70.
        probed.held = [:]
        // What the scan reads and changes for each key, in locals: through
        // the plan's and the probe's properties, each key cost dynamic
        // exclusivity checks, retains and releases (141 M of the 336 M
        // instructions the keys took, callgrind, the 200,000-event next day).
        let filter = keys.filter
        let spilled = probed.spilledFilter
        // Each key's state in the scan, in an array small enough to stay in
        // cache: a kept unit met it, and the kept units disagree with the probe.
        var met = [Bool](repeating: false, count: keys.count)
        var mixed = keys.entries.map(\.mixedInProbe)
        var identity: [UInt8] = []
        var next: DigestEntry?
        do { next = try sorted.nextEntry() } catch { throw .spill(error) }
        var failure: SpillError?
        // The entries of the kept unit being scanned: one, unless the inputs repeat it.
        var payloads: [UInt64] = []
        do {
            try store.forEachUnit { (unit) throws(StoreError) in
                payloads.removeAll(keepingCapacity: true)
                do throws(SpillError) {
                    while let entry = next, entry.digest < unit.digest { next = try sorted.nextEntry() }
                    while let same = next, same.digest == unit.digest {
                        payloads.append(same.payload)
                        next = try sorted.nextEntry()
                    }
                } catch {
                    failure = failure ?? error
                    return
                }
                guard !payloads.isEmpty else { return }
                var affected = false
                let readable = UnitKeys.forEachKey(unit.keys, digest: unit.digest) { table, bytes, contribution in
                    let hash = KeyFilter.hash(table: table, key: bytes)
                    let mayHold = filter.mayContain(hash: hash)
                    let maySpill = spilled?.mayContain(hash: hash) ?? false
                    guard mayHold || maySpill else { return }
                    let index = mayHold ? keys.index(of: bytes, table: table, hash: hash) : nil
                    if let index { met[index] = true }
                    guard !probedNone else { return }
                    if let index, keys.entries[index].isHeld {
                        if mixed[index] || keys.entries[index].first != contribution {
                            affected = true
                            mixed[index] = true
                        }
                    } else if maySpill {
                        UnitKeys.identity(table: table, key: bytes, into: &identity)
                        do throws(SpillError) {
                            try probed.meet(identity, contribution: contribution, payloads: payloads)
                        } catch {
                            failure = failure ?? error
                        }
                    }
                }
                if !readable { affected = true }
                if !affected, let fallback { affected = try !fallback.add(unit) }
                if affected { for payload in payloads { reselect(payload) } }
            }
            try fallback?.finish()
        } catch {
            throw .store(error)
        }
        if let failure { throw .spill(failure) }
        // A key several units write goes only when none of this run's does.
        for (index, entry) in keys.entries.enumerated() where entry.isRemoved && met[index] {
            removedKeys[Int(entry.table)].remove(keys.key(index))
        }
        let spilledMixed: [[UInt8]]
        do { spilledMixed = try probed.closeSpilled { reselect($0) } } catch { throw .spill(error) }
        let heldMixed = keys.entries.indices.filter { keys.entries[$0].isHeld && mixed[$0] }.map {
            UnitKeys.identity(table: Int(keys.entries[$0].table), key: keys.key($0))
        }
        mark(mixed: Set(heldMixed).union(spilledMixed))
    }

    /// Whether JSON input of `format` holds several top-level values, as the
    /// parse side reads it.
    func multipleValues(_ format: InputFormat) -> Bool {
        format == .jsonl || compiled.routes.contains { $0.path.components.isEmpty }
    }

    /// Reads `input` from its start, a chunk at a time: its spool when it
    /// has one, else the file. Returns its compression.
    @discardableResult
    func read(
        _ input: PlannedInput, _ body: (UnsafeRawBufferPointer) throws(ImportError) -> Void
    ) throws(ImportError) -> Compression {
        let source: ByteSource
        if let spool = input.spool {
            source = spool.reader()
        } else {
            do { source = try Input.open(path: input.name, chunkSize: options.chunkSize) } catch { throw .input(error) }
        }
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: options.chunkSize, alignment: 16)
        defer { buffer.deallocate() }
        while true {
            let count: Int
            do { count = try source.read(into: buffer) } catch { throw .input(error) }
            if count == 0 { return source.compression }
            try body(UnsafeRawBufferPointer(rebasing: buffer[..<count]))
        }
    }
}

/// The probe's record sink: maps each record into rows it then drops,
/// keeping only what the unit recorder gathers from them.
private final class ProbeSink: RecordSink {
    let batcher: Batcher
    var recorder: UnitRecorder?

    init(_ compiled: CompiledMapping, _ options: ImportOptions) {
        batcher = Batcher(compiled, limits: options.batch)
    }

    func record(_ tree: RecordTree, entities: [Int], deleting: [Int], ordinal: Int) throws {
        batcher.markRecord()
        try batcher.record(tree, entities: entities, deleting: deleting, ordinal: ordinal)
        recorder?.recorded(by: batcher)
        if batcher.isFull {
            _ = batcher.cut(checkpoint: Checkpoint(input: "", records: 0, bytes: 0), rawBytes: 0, records: 0)
        }
    }
}
