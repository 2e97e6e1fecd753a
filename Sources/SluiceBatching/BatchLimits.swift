/// How large batches may grow before they are handed to the store. The
/// import asks the batcher after each record whether either limit is
/// reached and cuts the group there, so a group holds at most one record's
/// rows (its nested objects and links included) beyond them; a resumed
/// standard input cuts nothing until the interrupted run's prefix is read
/// again, one chunk (`ImportOptions.chunkSize`) of records at most.
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
