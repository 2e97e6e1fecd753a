@_spi(Machinery) import SluiceRecords

/// What the parse thread owns: the input being read (its parser and record
/// assembler), the batcher filling the next group, how far the inputs have
/// been read and where a resume starts in each. It is its assembler's
/// record sink: after each record it asks the batcher whether the group is
/// full and, if so, cuts it onto the exchange's queue, so that a group never
/// holds more than ``BatchLimits`` plus one record. Everything it shares
/// with the store side goes through ``PipelineExchange``; a run has one
/// parse side, and parallel parsing would give each worker one.
final class ParseSide: RecordSink {
    let compiled: CompiledMapping
    let options: ImportOptions
    let exchange: PipelineExchange
    /// Fills the next group; its counts of rows per entity (records,
    /// nested objects, skipped) go into the report once the parse ends.
    let batcher: Batcher
    /// Where the mappers put values too long to carry (``ValueSpill``).
    let spill: ValueSpill

    /// The input being read.
    var input: (name: String, assembler: RecordAssembler, parser: DocumentParser)?
    var inputBytes: Int64 = 0
    var recordsBefore = 0
    var rawBefore: Int64 = 0
    var rawCurrent: Int64 = 0
    /// Inputs that gave no record (the mapping's record paths matched
    /// nothing), one warning each.
    var inputWarnings: [String] = []
    /// Each input's identity, saved with its checkpoints.
    let identities: [String: InputIdentity?]
    /// Records of each input committed by the run being resumed.
    let resumePoints: [String: Int]
    /// The stream prefixes of the interrupted run, by input name.
    let resumedStreams: [String: InputIdentity]
    /// Standard input: the CRC-32 of the bytes fed so far, the identity the
    /// next checkpoint records (the prefix through the chunk being parsed),
    /// and, when resuming, the prefix the stream must repeat; until it has,
    /// no group is cut (at most one chunk of records waits).
    var streamChecksum: Int64 = 0
    var streamIdentity: InputIdentity?
    var streamToVerify: InputIdentity?
    /// Set when the queue refused a group (the store side failed): the
    /// parse stops, and its error is the store's.
    private var storeStopped = false
    /// In a run that keeps record digests: cuts the input into units and
    /// records each one's digest and keys.
    var recorder: UnitRecorder?
    /// Inputs begun so far (the current one's index among the run's, less one).
    var inputsBegun = 0
    /// The worker threads of a run that parses on several cores
    /// (``ParseWorkers``), and the input they are parsing, which is then
    /// cut into items here instead of parsed (``InputSplit``).
    var workers: ParseWorkers?
    var split: InputSplit?

    /// A parse side for `compiled`, cutting groups onto `exchange`; the
    /// inputs' `identities` and what a resume skips (`resumePoints`, and
    /// `resumedStreams`, the prefixes standard input must repeat); long
    /// values go to `spill`.
    init(
        compiled: CompiledMapping, options: ImportOptions, exchange: PipelineExchange,
        identities: [String: InputIdentity?], resumePoints: [String: Int], resumedStreams: [String: InputIdentity],
        spill: ValueSpill
    ) {
        self.compiled = compiled
        self.spill = spill
        self.options = options
        self.exchange = exchange
        self.identities = identities
        self.resumePoints = resumePoints
        self.resumedStreams = resumedStreams
        batcher = Batcher(compiled, limits: options.batch)
        batcher.spares = exchange.spares
    }

    /// Records read so far, all inputs together.
    var records: Int { recordsBefore + (input?.assembler.recordCount ?? split?.units ?? 0) }

    /// Input bytes read so far, all inputs together (compressed bytes for
    /// compressed input).
    var rawBytes: Int64 { rawBefore + rawCurrent }

    /// Starts reading an input called `name` of `format`: as items for the
    /// workers when the run has them and the input can be cut
    /// (``beginSplit(name:format:compressed:)``), unless `onWorkers` is false
    /// (selected units read at their places, ``ImportPipeline/parsePlaced(_:name:format:size:)``).
    func beginInput(name: String, format: InputFormat, compressed: Bool, onWorkers: Bool = true) throws(ImportError) {
        let documentKind: DocumentKind = format == .xml ? .xml : .json
        guard documentKind == compiled.documentKind else {
            throw .usage(
                "\(name): the input is \(format.rawValue) but the mapping's record paths address \(compiled.documentKind.rawValue)"
            )
        }
        if onWorkers, try beginSplit(name: name, format: format, compressed: compressed) { return }
        try beginParse(name: name, format: format, compressed: compressed)
    }

    /// Starts reading input `name` on this thread.
    func beginParse(name: String, format: InputFormat, compressed: Bool) throws(ImportError) {
        let assembler = RecordAssembler(routes: compiled.routes, sink: self, limits: options.limits, spill: spill)
        assembler.skipThrough = resumePoints[name] ?? 0
        let multiple = multipleValues(format)
        let parser = DocumentParser(
            format: format, handler: assembler, name: name, compressed: compressed, multipleValues: multiple,
            limits: options.limits)
        input = (name, assembler, parser)
        try recorder?.begin(name: name, input: inputsBegun, compiled: compiled, multipleValues: multiple)
        inputsBegun += 1
        inputBytes = 0
        rawCurrent = 0
        streamChecksum = 0
        streamIdentity = nil
        streamToVerify = fileIdentity(name) == nil ? resumedStreams[name] : nil
    }

    /// Parses the next bytes of the current input; `raw` is how many bytes
    /// of the underlying file have been read so far.
    func feed(_ bytes: UnsafeRawBufferPointer, raw: Int64) throws(ImportError) {
        if split != nil { return try feedWorkers(bytes, raw: raw) }
        guard let input else { return }
        if exchange.cancelled.isSet { throw .cancelled }
        rawCurrent = raw
        if fileIdentity(input.name) == nil { try followStream(bytes) }
        if let recorder {
            try recorder.feed(bytes) { piece throws(ImportError) in
                do throws(ParseError) { try input.parser.feed(piece) } catch { throw translate(error) }
            } blank: { piece, starts, ends throws(ImportError) in
                do throws(ParseError) { try input.parser.feed(skipping: piece, starts: starts, ends: ends) } catch {
                    throw translate(error)
                }
            } reposition: { unit, _ throws(ImportError) in
                do throws(ParseError) { try input.parser.skip(to: unit) } catch { throw translate(error) }
                input.assembler.numberNext(unit.ordinal)
            }
        } else {
            do {
                try input.parser.feed(bytes)
            } catch {
                throw translate(error)
            }
        }
        inputBytes += Int64(bytes.count)
    }

    /// Ends the current input: the parser must find the document complete;
    /// its remaining rows are queued with the input's final checkpoint.
    func endInput() throws(ImportError) {
        if split != nil { return try endSplit() }
        guard let input else { return }
        // A JSON parse fed only some units (or none) ends between values, and
        // numbers the input's records as a whole parse would.
        let selective = recorder?.parsesSome == true
        try recorder?.flushHeld { piece throws(ImportError) in
            do throws(ParseError) { try input.parser.feed(piece) } catch { throw translate(error) }
        }
        do {
            if recorder?.fedDocument ?? true { try input.parser.finish() }
        } catch {
            throw translate(error)
        }
        try recorder?.end()
        if selective, let recorder { input.assembler.numberNext(recorder.unitsSeen + 1) }
        if let expected = streamToVerify {
            throw .usage(
                "cannot resume: \(input.name) ended after \(inputBytes) bytes, before the \(expected.size) bytes the interrupted run had read; run the import without --resume"
            )
        }
        guard cutGroup() else { throw exchange.storeFailure }
        if input.assembler.recordCount == 0 && resumePoints[input.name] == nil {
            let paths = compiled.routes.map { "\($0.path)" }
            inputWarnings.append(
                "\(input.name): no record matched the mapping (record paths: \(paths.joined(separator: ", ")))")
        }
        recordsBefore += input.assembler.recordCount
        rawBefore += rawCurrent
        rawCurrent = 0
        self.input = nil
    }

    /// The assembler's sink: maps the record through the batcher, then cuts
    /// the group if it is full. Stops the parse (throws) when the queue
    /// refuses the group; ``translate(_:)`` then reports the store's failure.
    func record(_ tree: RecordTree, entities: [Int], deleting: [Int], ordinal: Int) throws {
        if let recorder {
            batcher.markRecord()
            try batcher.record(tree, entities: entities, deleting: deleting, ordinal: ordinal)
            recorder.recorded(by: batcher)
        } else {
            try batcher.record(tree, entities: entities, deleting: deleting, ordinal: ordinal)
        }
        if batcher.isFull && !cutGroup() {
            storeStopped = true
            throw GroupRefused()
        }
    }

    /// Cuts the batcher's rows as a group with the current input's
    /// checkpoint (after its first `records`, by default every record read)
    /// and queues it, waiting while the queue is full; `false` when the
    /// queue refused it (the store side failed). Cuts nothing while the
    /// batcher is empty or a resumed stream is not yet verified.
    private func cutGroup(records: Int? = nil) -> Bool {
        guard let input, !batcher.isEmpty, streamToVerify == nil else { return true }
        let records = records ?? input.assembler.recordCount
        let group = batcher.cut(
            checkpoint: Checkpoint(
                input: input.name, records: records, bytes: inputBytes,
                identity: fileIdentity(input.name) ?? streamIdentity),
            rawBytes: rawBefore + rawCurrent, records: recordsBefore + records)
        return exchange.groups.push(group)
    }

    /// An error reading the current input, with where in it the parse got
    /// to: the decompressed bytes parsed and the record being read (or the
    /// next one, between records). The records before it are queued
    /// (``handOverRecords(before:)``).
    func damaged(_ error: InputError) -> ImportError {
        if split != nil { return damagedSplit(error) }
        guard let record = recordBeingRead else { return .input(error) }
        handOverRecords(before: record)
        return .damagedInput(error, decompressedBytes: inputBytes, record: record)
    }

    /// Before a run ends on a failure of its input's source outside sluice
    /// (a pushed import's caller): hands over the records read so far, as
    /// a parse error hands over those before it.
    func handOverRead() throws(ImportError) {
        if split != nil { return try handOverSplit() }
        if let record = recordBeingRead { handOverRecords(before: record) }
    }

    /// The number of the record being read in the current input, or of the
    /// next one between records.
    private var recordBeingRead: Int? {
        guard let assembler = input?.assembler else { return nil }
        return assembler.isInRecord ? max(assembler.recordCount, 1) : assembler.recordCount + 1
    }

    /// A parse error as the run reports it: with the number of the record
    /// it is in, or the store's failure when that stopped the parse. The
    /// records before it are queued (``handOverRecords(before:)``).
    func translate(_ error: ParseError) -> ImportError {
        if storeStopped { return exchange.storeFailure }
        guard let assembler = input?.assembler else { return .parse(error) }
        let numbered = Self.numbered(error, by: assembler)
        if let record = numbered.location.record { handOverRecords(before: record) }
        return .parse(numbered)
    }

    /// Before a run fails at record `record` of the current input: queues
    /// the rows of the records before it, and none of its own (a record
    /// whose mapping failed part way left some), so that a failed run
    /// commits exactly the records before the one that failed, whatever cut
    /// its groups: one thread or several (``ParseWorker``), a run that skips
    /// or a full one. Its checkpoint counts those records.
    private func handOverRecords(before record: Int) {
        guard let input else { return }
        batcher.dropRows(from: record)
        if !cutGroup(records: min(input.assembler.recordCount, record - 1)) { storeStopped = true }
    }

    /// `error` with the number of the record it is in: the record being
    /// assembled (or the one a handler rejected), else the next one.
    static func numbered(_ error: ParseError, by assembler: RecordAssembler) -> ParseError {
        var error = error
        let rejected: Bool
        if case .rejected = error.reason { rejected = true } else { rejected = false }
        error.location.record =
            assembler.isInRecord || rejected ? max(assembler.recordCount, 1) : assembler.recordCount + 1
        return error
    }
}

/// What ``ParseSide/record(_:entities:deleting:ordinal:)`` throws to stop
/// the parser when the store side failed; never reported itself.
private struct GroupRefused: Error {}
