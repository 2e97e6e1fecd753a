@_spi(Machinery) import SluiceRecords

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Runs one import: parses inputs on the calling thread (``ParseSide``) and
/// applies batch groups on a store thread (``StoreSide``), joined by a
/// bounded queue (``PipelineExchange``) so that a slow store blocks the
/// parser; then, on the calling thread again, delete-missing, dangling
/// references, the report and the ledger. Memory: the queue's groups plus
/// the group being filled plus one record.
final class ImportPipeline {
    let compiled: CompiledMapping
    let options: ImportOptions
    let startTime = ImportPipeline.now()
    /// The queue, cancellation flag, go-ahead and failure the two sides share.
    let exchange: PipelineExchange
    /// Owned by the calling thread: the inputs, parser and batcher.
    let parseSide: ParseSide
    /// Owned by the store thread until it is joined.
    let storeSide: StoreSide
    var storeWorker: Worker?
    /// The run's row in the ledger (0 in a dry run, which the ledger does
    /// not record).
    let runID: Int64
    var runRecorded = false
    /// In a dry run, the error the real run would end with after its
    /// writes (see ``ImportReport/wouldFail``).
    var wouldFail: String?
    /// The run this one resumes, as the ledger had it.
    var resumedRun: RunRecord?
    /// Why the run keeps no record digests (a warning of its report), nil
    /// when it keeps them (``DigestPolicy``).
    var digestRefusal: String?
    /// Why the run parses every record though its store keeps record
    /// digests (``ImportReport/fullPass``).
    var fullPass: String?
    /// The plan of a run that skips the units the store kept.
    var skipPlan: SkipPlan?
    /// In a run under another fingerprint than the store's valid digest set,
    /// which it keeps voiding the keys it writes: the set's units and its
    /// secret, should the run make its own set after all.
    var voiding: VoidedSet?
    /// The entities whose tables the store did not hold when the run began:
    /// every row they end with is one the run wrote.
    var newTables: Set<String> = []
    /// The entities the run's sweeps read whole: every stored row within
    /// the delete scope that the run did not see went (no
    /// `delete-scope-parent`).
    var sweptWhole: Set<String> = []

    init(
        compiled: CompiledMapping, storePath: String, openStore: Importer.StoreOpener?, options: ImportOptions,
        inputs: [(name: String, identity: InputIdentity?)], formats: [InputFormat?], expectedBytes: Int64?,
        progress: (@Sendable (ImportProgress) -> Void)?, cancellation: Flag = Flag()
    ) throws(ImportError) {
        self.compiled = compiled
        self.options = options
        if options.dryRun && options.resume {
            throw .usage(
                "--dry-run cannot be combined with --resume: a dry run commits nothing, and reads every input from its beginning"
            )
        }
        let store: any ImportStore
        var resumePoints: [String: Int] = [:]
        var resumedStreams: [String: InputIdentity] = [:]
        let target = StoreTarget(storePath)
        do throws(StoreError) {
            if let openStore {
                store = try openStore(options.store, options.dryRun)
            } else {
                store = try target.open(options: options.store, dryRun: options.dryRun)
            }
            for mapper in compiled.mappers {
                let stored = try store.storedColumns(of: mapper.schema.name)
                if stored == nil { newTables.insert(mapper.schema.name) }
                if let stored, !mapper.tableIsReady { mapper.adopt(stored: stored) }
            }
            // A table still waiting for its first record is made with its first batch.
            try store.prepare(compiled.mappers.filter(\.tableIsReady).map(\.schema), links: compiled.links)
        } catch {
            throw .store(error)
        }
        let runOptions = RunOptions(fingerprint: compiled.fingerprint, options: options)
        if options.resume {
            resumedRun = try Self.interruptedRun(store, inputs: inputs.map(\.name), runOptions)
            (resumePoints, resumedStreams) = try Self.resumePoints(store, inputs)
        }
        do throws(StoreError) {
            if !options.resume { try store.clearCheckpoints(inputs.map(\.name)) }
            try store.startTrackingSeenKeys(compiled.mappers.map(\.schema), resuming: options.resume)
            // Last, so that a run refused above leaves no ledger row: its
            // durable commit makes the two above durable too.
            runID =
                options.dryRun
                ? 0
                : try store.beginRun(
                    inputs: inputs.map(\.name), options: runOptions.json, resumeCommand: options.resumeCommand)
        } catch {
            throw .store(error)
        }
        let digests = try Self.recordDigests(
            store, compiled, options, formats: formats, directory: options.sort.directory ?? target.sortDirectory)
        let recorder = digests.recorder
        (skipPlan, digestRefusal, voiding, fullPass) = (
            digests.plan, digests.refusal, digests.voiding, digests.fullPass
        )
        let identities = Dictionary(inputs.map { ($0.name, $0.identity) }, uniquingKeysWith: { first, _ in first })
        let sortDirectory = options.sort.directory ?? target.sortDirectory
        // With parse workers the store thread only copies rows: their runs are written aside.
        let parsesOnWorkers = ParseWorkers.refusal(compiled, options) == nil
        let sorter =
            options.order == .key
            ? KeyOrderSorter(directory: sortDirectory, options: options.sort, aside: parsesOnWorkers) : nil
        if recorder != nil { sorter?.mixedKeys = MixedKeyLog() }
        exchange = PipelineExchange(
            limits: options.batch, tables: compiled.mappers.count + compiled.links.count, cancelled: cancellation)
        parseSide = ParseSide(
            compiled: compiled, options: options, exchange: exchange, identities: identities,
            resumePoints: resumePoints,
            resumedStreams: resumedStreams, spill: ValueSpill(directory: sortDirectory))
        parseSide.recorder = recorder
        storeSide = StoreSide(
            store: store, compiled: compiled, options: options, exchange: exchange, sorter: sorter,
            startTime: startTime,
            expectedBytes: expectedBytes, progress: progress)
        let cancelled = exchange.cancelled
        store.shouldAbort = { cancelled.isSet }
        let storeSide = self.storeSide
        do {
            storeWorker = try Worker { RunEnd.onRunThread { storeSide.run() } }
        } catch {
            let failure = ImportError.store(
                StoreError(path: storePath, action: "starting the store's thread", message: "\(error)", code: 0))
            record(failure: failure)
            throw failure
        }
        if parsesOnWorkers {
            // Nil when the system gives too few threads (the store's came
            // first): the run parses on this one.
            parseSide.workers = ParseWorkers(
                count: options.threads, compiled: compiled, options: options, exchange: exchange,
                spill: parseSide.spill, recorder: recorder)
        }
    }

    deinit {
        exchange.groups.fail()
        parseSide.workers?.stop()
        storeWorker?.join()
    }

    /// The store, which the orchestrator uses before the store thread starts
    /// and once it is joined.
    var store: any ImportStore { storeSide.store }

    // MARK: - Inputs (the parse side's)

    /// Starts reading an input called `name` of `format`.
    func beginInput(name: String, format: InputFormat, compressed: Bool) throws(ImportError) {
        try parseSide.beginInput(name: name, format: format, compressed: compressed)
    }

    /// Parses the next bytes of the current input; `raw` is how many bytes
    /// of the underlying file have been read so far.
    func feed(_ bytes: UnsafeRawBufferPointer, raw: Int64) throws(ImportError) {
        try parseSide.feed(bytes, raw: raw)
    }

    /// Ends the current input: the parser must find the document complete;
    /// its remaining rows are queued with the input's final checkpoint.
    func endInput() throws(ImportError) { try parseSide.endInput() }

    /// An error reading the current input, with where in it the parse got to.
    func damaged(_ error: InputError) -> ImportError { parseSide.damaged(error) }

    static func now() -> Double {
        var time = timespec()
        clock_gettime(CLOCK_MONOTONIC, &time)
        return Double(time.tv_sec) + Double(time.tv_nsec) / 1e9
    }
}
