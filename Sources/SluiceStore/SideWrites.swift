/// Rows a run wrote beyond its entities' own records, per table: link rows
/// added and removed, stub rows created for missing targets, and children
/// deleted with the parent that dropped them (`replace-and-delete`). Counted
/// from SQLite's change count of each statement, so rows that were already
/// there (`INSERT OR IGNORE`) do not count.
package struct SideWrites: Sendable, Equatable {
    /// Link rows inserted, by link table.
    package var linksAdded: [String: Int] = [:]
    /// Link rows deleted, by link table.
    package var linksRemoved: [String: Int] = [:]
    /// Stub rows created, by entity table.
    package var stubs: [String: Int] = [:]
    /// Child rows deleted because their parent dropped them, by entity table.
    package var childrenDeleted: [String: Int] = [:]

    package init() {}
}
