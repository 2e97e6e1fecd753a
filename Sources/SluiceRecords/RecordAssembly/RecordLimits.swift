/// Limits that keep one record, or one document, from taking unbounded
/// memory or time. The defaults are far above anything a real dump holds.
public struct RecordLimits: Sendable, Equatable {
    /// Deepest element or container nesting, in or out of records.
    public var maxDepth: Int = 1_000
    /// Largest record (names, values and tree nodes), in bytes.
    public var maxRecordBytes: Int = 64 << 20
    /// Largest single value (string, number, text, attribute), in bytes.
    /// For JSON it also bounds any token yajl must buffer, in or out of
    /// records. (libxml2 bounds XML tokens itself, at 10 MB.) yajl re-reads
    /// an unfinished token on every chunk, so stopping a hostile token costs
    /// time growing faster than its size: 0.7 s at 16 MiB, 4 s at 31 MiB.
    public var maxFieldBytes: Int = 16 << 20
    /// Most fields (attributes, elements, members, array items) in a record.
    public var maxFields: Int = 1_000_000

    /// The default limits.
    public init() {}
}
