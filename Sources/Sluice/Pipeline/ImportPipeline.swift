#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Runs one import: parses inputs on the calling thread and applies batch
/// groups on a store thread, joined by a bounded queue so that a slow store
/// blocks the parser. Memory: the queue's groups plus the group being filled
/// plus one record.
final class ImportPipeline {
    let compiled: CompiledMapping
    let options: ImportOptions
    let storePath: String
    let store: any ImportStore
    let queue: BlockingQueue<BatchGroup>
    let batcher: Batcher
    let startTime = ImportPipeline.now()
    let progress: (@Sendable (ImportProgress) -> Void)?
    var storeWorker: Worker?
    /// Set by the caller's cancellation or by ``cancel()``; every phase
    /// checks it between batches.
    let cancelled: Flag
    /// The run's row in the ledger (0 in a dry run, which the ledger does
    /// not record).
    let runID: Int64
    var runRecorded = false
    /// In a dry run, the error the real run would end with after its
    /// writes (see ``ImportReport/wouldFail``).
    var wouldFail: String?

    // Owned by the store thread until it is joined.
    var storeFailure: ImportError?
    /// The key-ordered apply's sorter (``ApplyOrder/key``), fed by the store
    /// thread; its rows are applied once the queue closes.
    let sorter: KeyOrderSorter?
    /// Set by ``finish()`` and ``drain()``: the sorted rows may be applied.
    /// A pipeline dropped without either applies nothing.
    let applySorted = Flag()
    /// Dangling references counted while the key-ordered apply goes on;
    /// set by the store thread, read once it is joined.
    var earlyCounts: EarlyReferenceCounts?
    var counts: [EntityCounts]
    /// Inputs that gave no record (the mapping's record paths matched
    /// nothing), one warning each.
    var inputWarnings: [String] = []
    /// What progress reports say: the last group's record and byte counts
    /// (set by the store thread), and in key order the rows to apply, the
    /// rows applied and when applying began.
    var recordsQueued = 0
    var bytesQueued: Int64 = 0
    var rowsToApply: Int?
    var rowsApplied = 0
    var applyStart = 0.0

    // The input being read.
    var input: (name: String, assembler: RecordAssembler, parser: DocumentParser)?
    var inputBytes: Int64 = 0
    var recordsBefore = 0
    var rawBefore: Int64 = 0
    var rawCurrent: Int64 = 0
    /// All inputs' sizes together, when every size is known (for the ETA).
    let expectedBytes: Int64?
    /// Each input's identity, saved with its checkpoints.
    var identities: [String: InputIdentity?] = [:]
    /// Records of each input committed by the run being resumed.
    var resumePoints: [String: Int] = [:]
    /// Standard input: the CRC-32 of the bytes fed so far, the identity the
    /// next checkpoint records (the prefix through the chunk being parsed),
    /// and, when resuming, the prefix the stream must repeat; until it has,
    /// no group is cut (at most one chunk of records waits).
    var streamChecksum: Int64 = 0
    var streamIdentity: InputIdentity?
    var streamToVerify: InputIdentity?
    /// The stream prefixes of the interrupted run, by input name.
    var resumedStreams: [String: InputIdentity] = [:]
    /// The run this one resumes, as the ledger had it.
    var resumedRun: RunRecord?

    init(
        compiled: CompiledMapping, storePath: String, openStore: Importer.StoreOpener?, options: ImportOptions,
        inputs: [(name: String, identity: InputIdentity?)], expectedBytes: Int64?,
        progress: (@Sendable (ImportProgress) -> Void)?, cancellation: Flag = Flag()
    ) throws(ImportError) {
        cancelled = cancellation
        self.compiled = compiled
        self.storePath = storePath
        self.expectedBytes = expectedBytes
        self.options = options
        self.progress = progress
        if options.dryRun && options.resume {
            throw .usage("--dry-run cannot be combined with --resume: a dry run commits nothing, and reads every input from its beginning")
        }
        let target = StoreTarget(storePath)
        do {
            store = try openStore?(options.store, options.dryRun)
                ?? target.open(options: options.store, dryRun: options.dryRun)
            for mapper in compiled.mappers where !mapper.tableIsReady {
                if let stored = try store.storedColumns(of: mapper.schema.name) { mapper.adopt(stored: stored) }
            }
            // A table still waiting for its first record is made with its first batch.
            try store.prepare(compiled.mappers.filter(\.tableIsReady).map(\.schema), links: compiled.links)
            let runOptions = RunOptions(fingerprint: compiled.fingerprint, options: options)
            if options.resume {
                resumedRun = try Self.interruptedRun(store, inputs: inputs.map(\.name), runOptions)
                (resumePoints, resumedStreams) = try Self.resumePoints(store, inputs)
            }
            if !options.resume { try store.clearCheckpoints(inputs.map(\.name)) }
            try store.startTrackingSeenKeys(compiled.mappers.map(\.schema), resuming: options.resume)
            // Last, so that a run refused above leaves no ledger row: its
            // durable commit makes the two above durable too.
            runID = options.dryRun ? 0 : try store.beginRun(inputs: inputs.map(\.name), options: runOptions.json, resumeCommand: options.resumeCommand)
        } catch let error as ImportError {
            throw error
        } catch let error as StoreError {
            throw .store(error)
        } catch {
            throw .usage("\(error)")
        }
        identities = Dictionary(inputs.map { ($0.name, $0.identity) }, uniquingKeysWith: { first, _ in first })
        sorter = options.order == .key
            ? KeyOrderSorter(
                directory: options.sort.directory ?? target.sortDirectory, options: options.sort) : nil
        queue = BlockingQueue(capacity: options.batch.queueDepth, weightLimit: options.batch.maxBytes) { $0.byteSize }
        batcher = Batcher(mappers: compiled.mappers, links: compiled.links, limits: options.batch)
        counts = Array(repeating: EntityCounts(), count: compiled.mappers.count)
        let cancelled = self.cancelled
        store.shouldAbort = { cancelled.isSet }
        batcher.onFull = { [unowned self] _ in try self.cutGroup() }
        storeWorker = Worker { [unowned self] in self.runStore() }
    }

    deinit {
        queue.fail()
        storeWorker?.join()
    }

    // MARK: - Inputs

    /// Starts reading an input called `name` of `format`.
    func beginInput(name: String, format: InputFormat, compressed: Bool) throws(ImportError) {
        let documentKind: DocumentKind = format == .xml ? .xml : .json
        guard documentKind == compiled.documentKind else {
            throw .usage("\(name): the input is \(format.rawValue) but the mapping's record paths address \(compiled.documentKind.rawValue)")
        }
        let assembler = RecordAssembler(routes: compiled.routes, sink: batcher, limits: options.limits)
        assembler.skipThrough = resumePoints[name] ?? 0
        let multiple = format == .jsonl || compiled.routes.contains { $0.path.components.isEmpty }
        let parser = DocumentParser(
            format: format, handler: assembler, name: name, compressed: compressed, multipleValues: multiple,
            limits: options.limits)
        input = (name, assembler, parser)
        inputBytes = 0
        rawCurrent = 0
        streamChecksum = 0
        streamIdentity = nil
        streamToVerify = fileIdentity(name) == nil ? resumedStreams[name] : nil
    }

    /// Parses the next bytes of the current input; `raw` is how many bytes
    /// of the underlying file have been read so far.
    func feed(_ bytes: UnsafeRawBufferPointer, raw: Int64) throws(ImportError) {
        guard let input else { return }
        if cancelled.isSet { throw .cancelled }
        rawCurrent = raw
        if fileIdentity(input.name) == nil { try followStream(bytes) }
        do {
            try input.parser.feed(bytes)
        } catch {
            throw translate(error)
        }
        inputBytes += Int64(bytes.count)
    }

    /// Ends the current input: the parser must find the document complete;
    /// its remaining rows are queued with the input's final checkpoint.
    func endInput() throws(ImportError) {
        guard let input else { return }
        do {
            try input.parser.finish()
        } catch {
            throw translate(error)
        }
        if let expected = streamToVerify {
            throw .usage("cannot resume: \(input.name) ended after \(inputBytes) bytes, before the \(expected.size) bytes the interrupted run had read; run the import without --resume")
        }
        do { try cutGroup() } catch let error as ImportError { throw error } catch { throw .usage("\(error)") }
        if input.assembler.recordCount == 0 && resumePoints[input.name] == nil {
            let paths = compiled.routes.map { "\($0.path)" }
            inputWarnings.append("\(input.name): no record matched the mapping (record paths: \(paths.joined(separator: ", ")))")
        }
        recordsBefore += input.assembler.recordCount
        rawBefore += rawCurrent
        rawCurrent = 0
        self.input = nil
    }

    func cutGroup() throws {
        guard let input, !batcher.isEmpty, streamToVerify == nil else { return }
        let records = input.assembler.recordCount
        let group = batcher.cut(
            checkpoint: Checkpoint(input: input.name, records: records, bytes: inputBytes, identity: fileIdentity(input.name) ?? streamIdentity),
            rawBytes: rawBefore + rawCurrent, records: recordsBefore + records)
        if !queue.push(group) {
            throw storeFailure ?? ImportError.store(StoreError(path: "", action: "applying a batch", message: "the store stopped", code: 0))
        }
    }

    /// An error reading the current input, with where in it the parse got
    /// to: the decompressed bytes parsed and the record being read (or the
    /// next one, between records).
    func damaged(_ error: InputError) -> ImportError {
        guard let assembler = input?.assembler else { return .input(error) }
        let record = assembler.isInRecord ? max(assembler.recordCount, 1) : assembler.recordCount + 1
        return .damagedInput(error, decompressedBytes: inputBytes, record: record)
    }

    func translate(_ error: ParseError) -> ImportError {
        var error = error
        if case .rejected(let inner) = error.reason {
            if let importError = inner as? ImportError { return importError }
            if let storeError = inner as? StoreError { return .store(storeError) }
        }
        if let assembler = input?.assembler {
            let rejected: Bool
            if case .rejected = error.reason { rejected = true } else { rejected = false }
            error.location.record = assembler.isInRecord || rejected ? max(assembler.recordCount, 1) : assembler.recordCount + 1
        }
        return .parse(error)
    }

    static func now() -> Double {
        var time = timespec()
        clock_gettime(CLOCK_MONOTONIC, &time)
        return Double(time.tv_sec) + Double(time.tv_nsec) / 1e9
    }
}
