@_spi(Machinery) import SluiceRecords

/// The keys whose occurrences in a run disagree (``RowArena/onePerKey(_:keys:combining:disagreeing:)``):
/// for them the order of the records decides the row, so the units that
/// produce them are always parsed (docs/record-digests.md). Filled on the
/// store thread, by the key-ordered sorter and the store's merge, and read
/// by the pipeline once that thread is joined.
///
/// Memory: the keys logged, at most ``limit``; past it the log only says
/// it overflowed (the run's digests are then not trusted).
package final class MixedKeyLog: @unchecked Sendable {
    /// The most keys held.
    package static let limit = 1_000_000

    /// The keys, as ``UnitKeys/identity(_:)`` gives them.
    package private(set) var identities: Set<[UInt8]> = []
    /// Whether more keys disagreed than ``limit``.
    package private(set) var overflowed = false

    package init() {}

    /// Logs the key of row `row` of `rows`, a row of entity `table` keyed by
    /// `keys`.
    package func add(table: Int, _ rows: RowArena, row: Int, keys: [Int]) {
        guard !overflowed else { return }
        identities.insert(UnitKeys.identity(table: table, key: UnitKeys.key(of: rows, row: row, columns: keys)))
        if identities.count > Self.limit {
            overflowed = true
            identities = []
        }
    }
}
