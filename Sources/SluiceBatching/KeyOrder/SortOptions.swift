/// In which order the store receives rows.
public enum ApplyOrder: String, Sendable, Equatable, CaseIterable {
    /// Each batch group is committed as soon as it is cut, in input order:
    /// the store follows the input closely and a resume continues from the
    /// last committed record.
    case input
    /// Rows are sorted by key in runs spilled to temporary files, merged once
    /// the input is read completely, and applied table by table in key
    /// order, so each page of each B-tree is written about once, the inputs'
    /// checkpoints last. Nothing is committed before the input has been read
    /// (a run that fails while reading applies the full batches it read,
    /// with their checkpoints; a cancelled one keeps none); a run cancelled
    /// while applying keeps the batches applied, and its resume reads every
    /// input again and re-applies every row (which leaves equal rows
    /// unchanged).
    case key
}

/// Tuning of the key-ordered apply (``ApplyOrder/key``).
public struct SortOptions: Sendable, Equatable {
    /// Rows held in memory (cells and text, all tables together) before they
    /// are sorted and spilled as runs; half of it again buffers the merge.
    /// A run that parses on several threads holds up to 1.5 times it while
    /// the input is read: the run being written aside and half of it filled.
    /// Measured on 2,000,000 generated events (1 GB, three tables and a link
    /// table): 6 MiB took 40.9 s at 59.7 MiB peak RSS, 8 MiB 41.2 s at
    /// 59.1 MiB; on the memory test's 150,000 events a debug build peaked at
    /// 54 MiB with 6 MiB and 62 MiB with 8, so 6 leaves room under 64.
    public var memoryBytes: Int = 6 << 20
    /// Where the run files go; `nil` puts them beside the store. They are
    /// unlinked at once and vanish when the import ends, however it ends.
    public var directory: String?
    /// Runs merged at once; past it, the smallest runs are merged into one
    /// first. The runs being merged share read buffers of about half of
    /// `memoryBytes` (a 16 KiB decompressed block and 8–64 KiB of compressed
    /// bytes a run).
    /// At 64, a 1 GB import (2,000,000 generated events, about 200 runs a
    /// table) spent 18 of its 73 s merging runs while the parser waited.
    public var fanIn: Int = 256

    /// The defaults: 6 MiB of rows, runs beside the store, 256 runs merged
    /// at once.
    public init() {}
}
