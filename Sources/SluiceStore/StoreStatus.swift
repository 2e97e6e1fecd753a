/// One import run as the store's ledger recorded it.
public struct RunRecord: Sendable, Equatable {
    /// The run's number in this store.
    public var id: Int64
    /// When it started and finished (UTC, `YYYY-MM-DD HH:MM:SS.SSS`).
    public var started: String
    /// `nil` while running, or when the process died.
    public var finished: String?
    /// Where the run stands (``RunStatus``).
    public var status: RunStatus
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
        id: Int64, started: String, finished: String?, status: RunStatus, inputs: String, records: Int?,
        counts: String?,
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

/// How a run recorded in a store's ledger stands; its raw value is the
/// ledger's text, which `sluice status` and `status --json` show.
public enum RunStatus: String, Sendable, Codable, CaseIterable {
    /// The run is going on (or its process cannot be checked from here:
    /// ``RunRecord/unverified`` says why).
    case running
    /// The run read every input, applied it and finished its sweeps.
    case completed
    /// The run stopped on an error (``RunRecord/error``).
    case failed
    /// The run was cancelled (a cancellation, SIGINT or SIGTERM).
    case cancelled
    /// The run's process (in PostgreSQL, its server session) died, found so
    /// by a later run or when the ledger was read.
    case interrupted

    /// The status a ledger's `text` names; a text this sluice does not know
    /// (recorded by a newer one) reads as ``failed``, a run that did not
    /// complete.
    package init(ledger text: String) {
        self = RunStatus(rawValue: text) ?? .failed
    }
}

/// A table of a store and its row count.
public struct TableRows: Sendable, Equatable {
    /// The table's name.
    public var name: String
    /// Its rows.
    public var rows: Int

    /// A table's row count (the stores build these when they read their status).
    package init(name: String, rows: Int) {
        self.name = name
        self.rows = rows
    }
}

/// What an input's checkpoint holds: how far runs committed it.
public struct InputCheckpoint: Sendable, Equatable {
    /// The input, as given to the run.
    public var input: String
    /// Its records committed.
    public var records: Int
    /// Its bytes (compressed bytes for compressed input) committed.
    public var bytes: Int64

    /// A checkpoint as a store's status reads it.
    package init(input: String, records: Int, bytes: Int64) {
        self.input = input
        self.records = records
        self.bytes = bytes
    }
}

/// The record digests a store keeps (docs/record-digests.md): what a
/// later run trusts to skip the records whose bytes it has seen.
public struct DigestStatus: Sendable, Equatable {
    /// Units (records) whose digests and keys the store keeps.
    public var units: Int
    /// Bytes those units take in the store's digest table (digests and
    /// keys, without the table's own overhead).
    public var bytes: Int64
    /// False when a run wrote the store without keeping digests (or stopped
    /// before saving them): the next run parses every record.
    public var valid: Bool

    /// A digest set as a store's status reads it.
    package init(units: Int, bytes: Int64, valid: Bool) {
        self.units = units
        self.bytes = bytes
        self.valid = valid
    }
}

/// What `sluice status` shows of a store.
public struct StoreStatus: Sendable, Equatable {
    /// The runs, newest first.
    public var runs: [RunRecord]
    /// The committed progress per input: records and bytes.
    public var checkpoints: [InputCheckpoint]
    /// The tables and their row counts.
    public var tables: [TableRows]
    /// The record digests, nil when the store keeps none.
    public var digests: DigestStatus? = nil
}
