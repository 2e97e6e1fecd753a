import SluiceInput
import SluiceRecords

/// Rows for one entity's table, handed to the store as a unit.
public struct Batch: Sendable {
    /// Index of the entity in the compiled mapping.
    public var entity: Int
    /// The table, as it was when the batch was cut (schemaless tables grow).
    public var schema: TableSchema
    /// The rows, in record order; keys may repeat (the last one wins).
    public var rows: RowArena
    /// For link rows of a to-many relationship, its link table (then
    /// ``entity`` is the source entity and ``schema`` its table).
    public var link: LinkSchema?

    /// Creates a batch.
    public init(entity: Int, schema: TableSchema, rows: RowArena, link: LinkSchema? = nil) {
        self.entity = entity
        self.schema = schema
        self.rows = rows
        self.link = link
    }
}

/// How far an input has been read once a group of batches is committed: all
/// records up to ``records`` are in the store.
public struct Checkpoint: Sendable, Equatable {
    /// The input's name.
    public var input: String
    /// The input file's identity, to refuse resuming against a changed file;
    /// `nil` for standard input.
    public var identity: InputIdentity?
    /// Records of this input read so far.
    public var records: Int
    /// Bytes of this input fed to the parser before the chunk in which the
    /// group was cut (decompressed bytes for compressed input).
    public var bytes: Int64

    /// Creates a checkpoint.
    public init(input: String, records: Int, bytes: Int64, identity: InputIdentity? = nil) {
        self.input = input
        self.identity = identity
        self.records = records
        self.bytes = bytes
    }
}

/// The batches cut at one moment, one per entity that had rows, committed
/// together in one transaction with their checkpoint.
public struct BatchGroup: Sendable {
    /// The batches, in entity order.
    public var batches: [Batch]
    /// The progress they complete; `nil` for the batches of the key-ordered
    /// apply, whose inputs' checkpoints are saved once every row is applied.
    public var checkpoint: Checkpoint?
    /// Input bytes read when the group was cut, all inputs together
    /// (compressed bytes for compressed input), for progress.
    public var rawBytes: Int64
    /// Records read when the group was cut, all inputs together.
    public var records: Int

    /// The bytes its batches' rows hold (``RowArena/byteSize``). O(batches).
    public var byteSize: Int { batches.reduce(0) { $0 + $1.rows.byteSize } }

    /// Creates a group.
    public init(batches: [Batch], checkpoint: Checkpoint?, rawBytes: Int64, records: Int) {
        self.batches = batches
        self.checkpoint = checkpoint
        self.rawBytes = rawBytes
        self.records = records
    }
}

/// How large batches may grow before they are handed to the store.
public struct BatchLimits: Sendable, Equatable {
    /// Rows in one group, all entities together. 5,000 keeps peak RSS under
    /// 64 MiB on the 1 GB events benchmark (10,000: 82 MiB with a 16 MiB cache).
    public var maxRows: Int = 5_000
    /// Bytes (cells and text) in one group, all entities together.
    public var maxBytes: Int = 8 << 20
    /// Groups waiting for the store before the parser blocks; together they
    /// hold at most ``maxBytes`` (a single group may exceed it), so one
    /// group being applied, one being filled and the queue stay within
    /// three groups' bytes. 4 lets the parser run on while the key-ordered
    /// apply spills a sorted run: on the 1 GB events benchmark the parse
    /// phase went from 20 s at 80% of a core (blocked behind each spill)
    /// with 1 to 15 s at 95% with 4, peak RSS unchanged (the peak is in
    /// the merge phase).
    public var queueDepth: Int = 4

    /// The defaults: 5,000 rows, 8 MiB, 4 groups queued.
    public init() {}
}
