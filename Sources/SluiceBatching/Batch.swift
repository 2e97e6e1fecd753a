import SluiceInput
@_spi(Machinery) import SluiceRecords

/// Rows for one entity's table, handed to the store as a unit.
package struct Batch: Sendable {
    /// Index of the entity in the compiled mapping.
    package var entity: Int
    /// The table, as it was when the batch was cut (schemaless tables grow).
    package var schema: TableSchema
    /// The rows, in record order; keys may repeat (the last one wins).
    package var rows: RowArena
    /// For link rows of a to-many relationship, its link table (then
    /// ``entity`` is the source entity and ``schema`` its table).
    package var link: LinkSchema?

    /// Creates a batch.
    package init(entity: Int, schema: TableSchema, rows: RowArena, link: LinkSchema? = nil) {
        self.entity = entity
        self.schema = schema
        self.rows = rows
        self.link = link
    }
}

/// How far an input has been read once a group of batches is committed: all
/// records up to ``records`` are in the store.
package struct Checkpoint: Sendable, Equatable {
    /// The input's name.
    package var input: String
    /// The input file's identity, to refuse resuming against a changed file;
    /// `nil` for standard input.
    package var identity: InputIdentity?
    /// Records of this input read so far.
    package var records: Int
    /// Bytes of this input fed to the parser before the chunk in which the
    /// group was cut (decompressed bytes for compressed input).
    package var bytes: Int64

    /// Creates a checkpoint.
    package init(input: String, records: Int, bytes: Int64, identity: InputIdentity? = nil) {
        self.input = input
        self.identity = identity
        self.records = records
        self.bytes = bytes
    }
}

/// The batches cut at one moment, one per entity that had rows, committed
/// together in one transaction with their checkpoint.
package struct BatchGroup: Sendable {
    /// The batches, in entity order.
    package var batches: [Batch]
    /// The progress they complete; `nil` for the batches of the key-ordered
    /// apply, whose inputs' checkpoints are saved once every row is applied.
    package var checkpoint: Checkpoint?
    /// Input bytes read when the group was cut, all inputs together
    /// (compressed bytes for compressed input), for progress.
    package var rawBytes: Int64
    /// Records read when the group was cut, all inputs together.
    package var records: Int
    /// Where the store's merge logs the keys whose occurrences disagree, in
    /// a run that keeps record digests.
    package var mixedKeys: MixedKeyLog?

    /// The bytes its batches' rows hold (``RowArena/byteSize``). O(batches).
    package var byteSize: Int { batches.reduce(0) { $0 + $1.rows.byteSize } }

    /// Creates a group.
    package init(batches: [Batch], checkpoint: Checkpoint?, rawBytes: Int64, records: Int) {
        self.batches = batches
        self.checkpoint = checkpoint
        self.rawBytes = rawBytes
        self.records = records
    }
}
