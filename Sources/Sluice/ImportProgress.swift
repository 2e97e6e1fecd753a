/// Where a running import is: its phase, what it has read and written, and
/// an estimate of the time left. Reported after each committed batch (or
/// each sorted group while reading in key order), at each phase change, and
/// once with ``Phase/done``.
public struct ImportProgress: Sendable, Equatable, Codable {
    /// The phases of a run, in order; a run may skip some.
    public enum Phase: String, Sendable, Codable, CaseIterable {
        /// Inputs are parsed and mapped; rows are applied as they come
        /// (`ApplyOrder.input`) or sorted into runs (`ApplyOrder.key`).
        case reading
        /// Key order: the sorted runs are merged and applied, table by
        /// table (``table``): entities first, link tables last.
        case applying
        /// Delete-missing: stored rows the run did not see are swept, entity
        /// by entity (``table``).
        case deleting
        /// Links to records that are not in the store are counted.
        case checking
        /// The run is recorded as completed.
        case done
    }

    /// The phase the run is in.
    public var phase: Phase
    /// The table being applied or swept, in those phases.
    public var table: String?
    /// Records read so far, all inputs together.
    public var records: Int
    /// Input bytes read so far (compressed bytes for compressed input).
    public var bytesRead: Int64
    /// Total input bytes when every input's size is known.
    public var bytesTotal: Int64?
    /// Key order: rows applied so far, all tables together.
    public var rowsApplied: Int
    /// Key order: the rows to apply, known once every input is read (nil
    /// before, and in input order). It starts as the rows sorted, and at the
    /// end of each table is lowered by the rows of that table that repeated a
    /// key and were combined, so that it never counts less than
    /// ``rowsApplied`` and equals it once the apply is done.
    public var rowsTotal: Int?
    /// Seconds since the import started.
    public var seconds: Double
    /// An estimate of the seconds left in the whole run, when one can be
    /// made: while reading, the rest of the input at the rate so far plus,
    /// in key order, the apply phase still to come (0.8 times the reading
    /// time, as measured on the events benchmark); while applying, the rows
    /// left at the apply rate so far; none while deleting or checking.
    public var secondsLeft: Double?
    /// Counts per entity so far: inserted, updated, unchanged, deleted.
    public var entities: [String: EntityCounts]

    /// A progress report; the counts start at zero.
    public init(
        phase: Phase, table: String? = nil, records: Int = 0, bytesRead: Int64 = 0, bytesTotal: Int64? = nil,
        rowsApplied: Int = 0, rowsTotal: Int? = nil, seconds: Double = 0, secondsLeft: Double? = nil,
        entities: [String: EntityCounts] = [:]
    ) {
        self.phase = phase
        self.table = table
        self.records = records
        self.bytesRead = bytesRead
        self.bytesTotal = bytesTotal
        self.rowsApplied = rowsApplied
        self.rowsTotal = rowsTotal
        self.seconds = seconds
        self.secondsLeft = secondsLeft
        self.entities = entities
    }
}

/// The estimate of the time left in a run, from its phase and rates.
///
/// - Reading: the rest of the input at the rate so far, plus, in key order,
///   the apply phase still to come, estimated as ``applyShareOfReading``
///   times the whole reading time.
/// - Applying: the rows left at the apply rate so far.
/// - Deleting and checking: no estimate (their cost depends on the store's
///   size, not on the input).
enum ProgressEstimate {
    /// The apply phase's time relative to the reading phase's in key order,
    /// measured on the events benchmark (2,000,000 shuffled keys, three
    /// tables): reading and sorting about 12 s, merging and applying about
    /// 10 s.
    static let applyShareOfReading = 0.8

    /// Seconds left while reading, or `nil` without a known total.
    static func reading(seconds: Double, bytesRead: Int64, bytesTotal: Int64?, keyOrder: Bool) -> Double? {
        guard let total = bytesTotal, total > 0, bytesRead > 0 else { return nil }
        let fraction = min(1, Double(bytesRead) / Double(total))
        let readingTotal = seconds / fraction
        return readingTotal - seconds + (keyOrder ? readingTotal * applyShareOfReading : 0)
    }

    /// Seconds left while applying `applied` of `total` rows for `elapsed`
    /// seconds.
    static func applying(elapsed: Double, applied: Int, total: Int?) -> Double? {
        guard let total, total > 0, applied > 0 else { return nil }
        let fraction = min(1, Double(applied) / Double(total))
        return elapsed / fraction - elapsed
    }
}
