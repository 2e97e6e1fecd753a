/// Imports XML or JSON inputs into a SQLite store or a PostgreSQL database
/// as a mapping says.
///
/// ```swift
/// let mapping = try Mapping.parse(yaml: text, file: "mapping.yml")
/// let importer = try Importer(mapping: mapping, store: "dump.sqlite")
/// let report = try await importer.run(inputs: ["Posts.xml", "Users.xml.bz2"])
/// print(report[entity: "Post"]?.inserted ?? 0)
/// ```
/// Each run reads its inputs a few chunks ahead on one thread, parses on
/// another and writes on a third; memory stays bounded by the batch limits
/// whatever the input size. Batches commit one by one, and a failure or a
/// cancellation keeps what was committed before it: in key order (the
/// default, ``ApplyOrder/key``) nothing is committed until every input is
/// read (a run cancelled while reading keeps no row, one that failed
/// applies the full batches it read), in input order each batch as it is
/// cut; the getting-started article's "What a cancel keeps" says what a
/// resume recovers in each.
public struct Importer: Sendable {
    /// The store: a SQLite file's path, or a PostgreSQL connection string
    /// (`postgresql://…`, libpq's keyword form, or `postgresql:` for the
    /// `PG*` environment variables), or `null:` for a store that keeps
    /// nothing.
    public let storePath: String
    /// The options every run uses.
    public let options: ImportOptions
    /// Opens the store of each run in place of the one ``storePath`` names
    /// (nil, the default, opens that one), so that a test can run a whole
    /// import into a store it made; ``storePath`` then only names the store
    /// in messages and places the key-ordered apply's sorted runs beside it.
    package var openStore: StoreOpener?
    private let source: MappingSource

    /// Opens a run's store from the run's store options; `dryRun` as
    /// ``ImportOptions/dryRun``.
    package typealias StoreOpener = @Sendable (StoreOptions, _ dryRun: Bool) throws(StoreError) -> any ImportStore

    private enum MappingSource: Sendable {
        case mapping(Mapping, hooks: [String: EntityHooks])
        case schemaless(entity: String, key: String)
    }

    /// An importer for `mapping` into the store at `store` (a SQLite file,
    /// created if missing, or a PostgreSQL database, see ``storePath``),
    /// running `hooks` (by entity name) for each record. Checks the mapping;
    /// opens nothing yet.
    ///
    /// - Throws: ``ImportError/mapping(_:)`` when the mapping is invalid.
    public init(
        mapping: Mapping, store: String, options: ImportOptions = ImportOptions(), hooks: [String: EntityHooks] = [:]
    ) throws(ImportError) {
        do {
            _ = try CompiledMapping(mapping, hooks: hooks)
        } catch {
            throw .mapping(error)
        }
        source = .mapping(mapping, hooks: hooks)
        storePath = store
        self.options = options
    }

    /// An importer without a mapping: JSON objects (JSON Lines, or the
    /// elements of a top-level array) become rows of `entity` keyed by the
    /// member `key`, with columns added as new members appear. Nested values
    /// are stored as JSON text.
    public init(entity: String, key: String, store: String, options: ImportOptions = ImportOptions()) {
        source = .schemaless(entity: entity, key: key)
        storePath = store
        self.options = options
    }

    /// Imports `inputs` (paths; `-` is standard input) in order and returns
    /// the counts. Blocks the calling thread; `progress` is called from the
    /// store thread after each commit.
    ///
    /// - Throws: ``ImportError``; batches committed before the error stay.
    public func runBlocking(
        inputs: [String], progress: (@Sendable (ImportProgress) -> Void)? = nil
    ) throws(ImportError) -> ImportReport {
        try runBlocking(inputs: inputs, progress: progress, cancellation: Flag())
    }

    /// Imports `inputs` like ``runBlocking(inputs:progress:)``, stopping
    /// when `cancellation` is cancelled (from any thread): the open
    /// transaction rolls back, the run is recorded as cancelled, and the call
    /// throws ``ImportError/cancelled``; ``ImportCancellation/cancel()``
    /// returns once this call has released the store.
    public func runBlocking(
        inputs: [String], progress: (@Sendable (ImportProgress) -> Void)? = nil, cancellation: ImportCancellation
    ) throws(ImportError) -> ImportReport {
        cancellation.end.begin()
        defer { cancellation.end.end() }
        return try runBlocking(inputs: inputs, progress: progress, cancellation: cancellation.flag)
    }

    /// Imports `inputs` from async code on a thread of its own. Cancelling
    /// the task stops the import: the batch being written rolls back, the
    /// batches committed before stay, and the call throws
    /// ``ImportError/cancelled``.
    public func run(
        inputs: [String], progress: (@Sendable (ImportProgress) -> Void)? = nil
    ) async throws(ImportError) -> ImportReport {
        let flag = Flag()
        let result: Result<ImportReport, ImportError> = await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in
                let body = {
                    do throws(ImportError) {
                        continuation.resume(
                            returning: .success(try runBlocking(inputs: inputs, progress: progress, cancellation: flag))
                        )
                    } catch {
                        continuation.resume(returning: .failure(error))
                    }
                }
                // Without a thread of its own the run blocks the task's.
                do { try Worker(body).detach() } catch { body() }
            }
        } onCancel: {
            flag.set()
        }
        return try result.get()
    }

    /// Starts an import fed by the caller: hand bytes to
    /// ``PushImport/push(_:)-(UnsafeRawBufferPointer)`` as they arrive (say, from a network response),
    /// then call ``PushImport/finish()``. `name` labels the input in messages
    /// and checkpoints; `progress` is called from the store thread.
    public func startPush(
        name: String, format: InputFormat, progress: (@Sendable (ImportProgress) -> Void)? = nil
    ) throws(ImportError) -> PushImport {
        let compiled = try compile(for: format)
        let pipeline = try ImportPipeline(
            compiled: compiled, storePath: storePath, openStore: openStore, options: options, inputs: [(name, nil)],
            formats: [nil], expectedBytes: nil, progress: progress)
        try RunEnd.onRunThread { () throws(ImportError) in
            try pipeline.beginInput(name: name, format: format, compressed: false)
        }
        return PushImport(pipeline: pipeline)
    }

    /// The mapping compiled for a run: each entity's write mode and
    /// delete-missing settled from the mapping, else from ``options``.
    private func compile(for format: InputFormat?) throws(ImportError) -> CompiledMapping {
        let defaults = EntityDefaults(mode: options.store.mode, deleteMissing: options.store.deleteMissing)
        switch source {
        case .mapping(let mapping, let hooks):
            do { return try CompiledMapping(mapping, hooks: hooks, defaults: defaults) } catch { throw .mapping(error) }
        case .schemaless(let entity, let key):
            let records = format == .json ? "$[*]" : "$"
            guard case .success(let path) = RecordPath.parse(records) else { throw .usage("bad record path") }
            return CompiledMapping(schemaless: entity, key: key, records: path, defaults: defaults)
        }
    }

    /// Runs an import on the calling thread, marked as a run's thread
    /// (hooks run on it; see ``RunEnd``); the pipeline, and with it the
    /// store, is let go before it returns.
    func runBlocking(
        inputs: [String], progress: (@Sendable (ImportProgress) -> Void)?, cancellation: Flag
    ) throws(ImportError) -> ImportReport {
        try RunEnd.onRunThread { () throws(ImportError) in
            try runMarked(inputs: inputs, progress: progress, cancellation: cancellation)
        }
    }

    private func runMarked(
        inputs: [String], progress: (@Sendable (ImportProgress) -> Void)?, cancellation: Flag
    ) throws(ImportError) -> ImportReport {
        guard !inputs.isEmpty else { throw .usage("no inputs to import") }
        var sources: [(path: String, source: ByteSource, format: InputFormat)] = []
        for path in inputs {
            let source: ByteSource
            do { source = try Input.open(path: path, chunkSize: options.chunkSize) } catch { throw .input(error) }
            let format = format(of: path)
            sources.append((path, source, format))
        }
        let compiled = try compile(for: sources.first?.format)
        let sizes = sources.map(\.source.totalBytes)
        let expected = sizes.contains(nil) ? nil : sizes.reduce(0) { $0 + ($1 ?? 0) }
        var identities: [(name: String, identity: InputIdentity?)] = []
        for path in inputs {
            do { identities.append((path, try InputIdentity.of(path: path))) } catch { throw .input(error) }
        }
        let pipeline = try ImportPipeline(
            compiled: compiled, storePath: storePath, openStore: openStore, options: options, inputs: identities,
            formats: sources.map(\.format), expectedBytes: expected, progress: progress, cancellation: cancellation)
        do throws(ImportError) {
            let spools = try pipeline.planSkipping(sources, cancellation: cancellation)
            for (index, (path, opened, format)) in sources.enumerated() {
                // A file whose selected units the plan placed is read at their places alone.
                if try pipeline.parsePlaced(index, name: path, format: format, size: opened.totalBytes) { continue }
                // A stream that a run that skips spooled is read from its spool.
                let source: ByteSource = spools[index]?.reader() ?? opened
                try pipeline.beginInput(name: path, format: format, compressed: source.compression != .none)
                let reader = ReadAhead(source, chunkSize: options.chunkSize, cancellation: cancellation)
                defer { reader.stop() }
                while true {
                    let chunk: (bytes: UnsafeRawBufferPointer, consumed: Int64)
                    do { chunk = try reader.next() } catch { throw pipeline.damaged(error) }
                    if chunk.bytes.isEmpty { break }
                    try pipeline.feed(chunk.bytes, raw: chunk.consumed)
                }
                // A cancel ends the wait for the input's next chunk as its end would.
                if cancellation.isSet { throw .cancelled }
                try pipeline.endInput()
            }
            return try pipeline.finish()
        } catch {
            if case .cancelled = error { pipeline.cancel() }
            // What was parsed before the error is still committed.
            pipeline.drain()
            pipeline.record(failure: error)
            throw error
        }
    }

    /// The format of an input: the option, else its name, else the mapping.
    private func format(of path: String) -> InputFormat {
        if let format = options.format ?? InputFormat.detect(path: path) { return format }
        if case .mapping(let mapping, _) = self.source, let first = mapping.entities.first?.records.first {
            if first.hasPrefix("/") { return .xml }
            return first == "$" ? .jsonl : .json
        }
        return .jsonl
    }
}
