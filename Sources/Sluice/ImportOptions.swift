/// Everything that tunes an import; the defaults suit any dump.
public struct ImportOptions: Sendable, Equatable {
    /// Bytes read from disk and fed to the parser at a time.
    public var chunkSize: Int = Input.defaultChunkSize
    /// Batch bounds and queue depth between parser and store.
    public var batch = BatchLimits()
    /// Store tuning (page cache, lookup size).
    public var store = StoreOptions()
    /// Per-record limits (nesting depth, record size).
    public var limits = RecordLimits()
    /// The input syntax; `nil` guesses it from each input's name, then from
    /// the mapping's record paths.
    public var format: InputFormat?

    /// The defaults.
    public init() {}
}

/// Progress of a running import, reported after each committed batch.
public struct ImportProgress: Sendable, Equatable {
    /// Records read so far, all inputs together.
    public var records: Int
    /// Input bytes read so far (compressed bytes for compressed input).
    public var bytesRead: Int64
    /// Total input bytes when every input's size is known.
    public var bytesTotal: Int64?
    /// Seconds since the import started.
    public var seconds: Double
}

/// What an import did.
public struct ImportReport: Sendable, Equatable {
    /// Records read, all inputs together.
    public var records: Int
    /// Input bytes read (compressed bytes for compressed input).
    public var bytes: Int64
    /// Wall-clock seconds.
    public var seconds: Double
    /// Counts per entity, in mapping order.
    public var entities: [(name: String, counts: EntityCounts)]

    /// Reports are equal when every count and figure is.
    public static func == (lhs: ImportReport, rhs: ImportReport) -> Bool {
        lhs.records == rhs.records && lhs.bytes == rhs.bytes && lhs.seconds == rhs.seconds
            && lhs.entities.map(\.name) == rhs.entities.map(\.name)
            && lhs.entities.map(\.counts) == rhs.entities.map(\.counts)
    }

    /// The counts of the entity called `name`.
    public subscript(entity name: String) -> EntityCounts? {
        entities.first { $0.name == name }?.counts
    }
}
