/// What one entity's batches did to its table.
public struct EntityCounts: Sendable, Equatable, Codable {
    /// New keys written.
    public var inserted = 0
    /// Known keys whose values changed.
    public var updated = 0
    /// Known keys whose values were all the same (nothing written).
    public var unchanged = 0
    /// Rows removed.
    public var deleted = 0
    /// Records not imported: filtered out, or missing their key under
    /// `missing-key: skip`.
    public var skipped = 0

    /// All zero.
    public init() {}

    /// Adds `other` to these counts.
    public mutating func add(_ other: EntityCounts) {
        inserted += other.inserted
        updated += other.updated
        unchanged += other.unchanged
        deleted += other.deleted
        skipped += other.skipped
    }
}
