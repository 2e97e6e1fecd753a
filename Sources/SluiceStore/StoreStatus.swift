/// One import run as the store's ledger recorded it.
public struct RunRecord: Sendable, Equatable {
    /// The run's number in this store.
    public var id: Int64
    /// When it started and finished (UTC, `YYYY-MM-DD HH:MM:SS.SSS`).
    public var started: String
    /// `nil` while running, or when the process died.
    public var finished: String?
    /// `running`, `completed`, `failed`, `cancelled`, or `interrupted`: the
    /// run's process (or, in PostgreSQL, its server session) died, found so
    /// by a later run or when the ledger is read.
    public var status: String
    /// The inputs, as given.
    public var inputs: String
    /// Records read.
    public var records: Int?
    /// Counts per entity, as JSON.
    public var counts: String?
    /// The error and its location, for failed runs.
    public var error: String?
    /// What decides the run's result (the mapping's fingerprint, the write
    /// mode, delete-missing…), as a JSON object; `nil` for runs recorded by
    /// a sluice that did not record them yet. A resume must repeat them.
    public var options: String?
    /// Whether the run finished its delete-missing sweeps (a run stopped
    /// after them and resumed does not sweep again).
    public var swept: Bool = false
    /// The command that continues the run with `--resume`, as the program
    /// that started it recorded it (``ImportOptions/resumeCommand``); nil
    /// when it recorded none.
    public var resumeCommand: String? = nil
    /// For a run shown as `running` whose process sluice cannot check (it
    /// runs on another host, or an older sluice recorded it): why. Nil when
    /// its process was found alive, and for every other status.
    public var unverified: String? = nil

    /// A run as a store's ledger recorded it (the stores build these when
    /// they read their ledger).
    package init(
        id: Int64, started: String, finished: String?, status: String, inputs: String, records: Int?, counts: String?,
        error: String?, options: String?, swept: Bool = false, resumeCommand: String? = nil
    ) {
        self.id = id
        self.started = started
        self.finished = finished
        self.status = status
        self.inputs = inputs
        self.records = records
        self.counts = counts
        self.error = error
        self.options = options
        self.swept = swept
        self.resumeCommand = resumeCommand
    }
}

/// What `sluice status` shows of a store.
public struct StoreStatus: Sendable, Equatable {
    /// The runs, newest first.
    public var runs: [RunRecord]
    /// The committed progress per input: records and bytes.
    public var checkpoints: [(input: String, records: Int, bytes: Int64)]
    /// The tables and their row counts.
    public var tables: [(name: String, rows: Int)]

    public static func == (lhs: StoreStatus, rhs: StoreStatus) -> Bool {
        lhs.runs == rhs.runs && lhs.checkpoints.map(\.input) == rhs.checkpoints.map(\.input)
            && lhs.tables.map(\.name) == rhs.tables.map(\.name) && lhs.tables.map(\.rows) == rhs.tables.map(\.rows)
    }
}
