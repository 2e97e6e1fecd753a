/// Everything that tunes an import; the defaults suit any dump.
public struct ImportOptions: Sendable, Equatable {
    /// Bytes read from disk and fed to the parser at a time.
    public var chunkSize: Int = Input.defaultChunkSize

    /// Bytes read and parsed at a time unless ``chunkSize`` says otherwise.
    public static var defaultChunkSize: Int { Input.defaultChunkSize }
    /// Batch bounds and queue depth between parser and store.
    public var batch = BatchLimits()
    /// Store tuning (page cache, lookup size).
    public var store = StoreOptions()
    /// Whether rows reach the store in input order, committed as they come,
    /// or sorted by key and applied once the input is read (see
    /// `ApplyOrder`).
    public var order: ApplyOrder = .key
    /// Memory, directory and fan-in of the key-ordered apply.
    public var sort = SortOptions()
    /// Per-record limits (nesting depth, record size).
    public var limits = RecordLimits()
    /// The input syntax; `nil` guesses it from each input's name, then from
    /// the mapping's record paths.
    public var format: InputFormat?
    /// Continue an interrupted run: each input's records up to its committed
    /// checkpoint are read but not written again. Refused when an input
    /// changed since (size, modification time, first MiB) or is standard
    /// input.
    public var resume = false
    /// The command that would continue this run with ``resume``, should it
    /// stop: the ledger keeps it, and ``Status`` gives it with a run whose
    /// process died (`sluice status` prints it). The CLI records its own
    /// command line with `--resume`; `nil` records none.
    public var resumeCommand: String?
    /// Let delete-missing empty an entity of which the run saw no record at
    /// all (by default such an entity is left alone and a warning given).
    public var allowEmptyDelete = false
    /// A brake on delete-missing: before deleting anything, every entity's
    /// would-be deletions are counted (a scan of its table), and when any
    /// entity would lose more than this the run fails with
    /// ``ImportError/deletionLimit(_:)``, deleting nothing; what it inserted
    /// and updated stays committed, and so do the keys it saw, so a resume
    /// with a larger limit sweeps without reading the inputs into the store
    /// again. `nil` (the default) deletes whatever is missing. A resume may
    /// give a different limit than the run it continues.
    public var maxDelete: DeleteLimit?
    /// Reads, maps, compares, writes and sweeps exactly as a run does, all
    /// in one store transaction that is rolled back at the end, and reports
    /// what the run would have done (``ImportReport/dryRun``): the store is
    /// left as it was and the ledger does not record it. A SQLite store that
    /// does not exist is not created (the run works in a private temporary
    /// database). The store stays locked for writing until the dry run ends,
    /// and a SQLite dry run needs the disk space of the changes in its WAL.
    /// A failure the real run would meet after its writes (deletions beyond
    /// ``maxDelete``, dangling references under `missing: error`) is
    /// reported in ``ImportReport/wouldFail`` rather than thrown. Refused
    /// with ``resume``.
    public var dryRun = false
    /// Parse every record, and keep no record digests (docs/record-digests.md):
    /// the run writes the store as any run does and voids the digests an
    /// earlier run kept, so the next run without it parses every record
    /// again and keeps new ones. For a store whose tables something other
    /// than sluice wrote, and for comparing a run that skips with one that
    /// does not.
    public var noSkip = false
    /// Threads that parse and map records (at least 1; default
    /// ``defaultThreads``, the cores the process may use, at most 16). A run
    /// with any number gives what a run with one gives: the same store,
    /// report, record numbers and errors; 1 keeps the one-thread path. JSON
    /// Lines (and JSON whose record path is `$`), one JSON document (`$[*]`,
    /// `$.items[*]`) and XML are cut at record boundaries into items of
    /// 256 KiB that the threads parse and map (an XML item after its
    /// context: the declaration, the DOCTYPE, the open ancestors' start tags;
    /// a JSON document's after the path to its first element, the commas and
    /// brackets between elements parsed with them), their rows reaching the
    /// store in input order; reading and decompressing keep their own
    /// thread. In a run that keeps record digests the threads hash the
    /// records too. A run that skips parses on one thread the units it reads
    /// at their places (a JSON Lines file, or an XML file in UTF-8 whose
    /// records share one parent, not compressed: its new and changed
    /// records), and hands the threads only the records it parses otherwise
    /// (XML and one JSON document: it parses on one thread). An XML document
    /// declared in an encoding other than UTF-8, or in UTF-16, parses on one
    /// thread. Other runs parse on one thread whatever this says: records
    /// nested inside the values of JSON Lines, `--order input`, zero-config
    /// imports and mappings with hooks. On a 2-core machine the store thread
    /// bounds the run: 2 threads measured 0.85–0.86 × the wall of one into
    /// SQLite (docs/performance.md). Each
    /// thread holds about 1.5 MiB while it works. Not part of a run's
    /// identity: a resume may use another number.
    public var threads = ImportOptions.defaultThreads

    /// The defaults.
    public init() {}
}
