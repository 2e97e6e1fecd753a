/// The dangling counts a PostgreSQL database keeps, for tests that compare
/// them with a recount.
extension PostgresReader {
    /// The counts `_sluice_dangling` keeps with the changes its triggers
    /// appended since (`_sluice_dangling_changes`), by relationship name;
    /// nil for a count that is unknown. Empty when the database keeps none.
    public func keptDanglingCounts() -> [String: String?] {
        var counts: [String: String?] = [:]
        let rows = rows(
            "SELECT d.name, CASE WHEN EXISTS (SELECT 1 FROM _sluice_dangling_changes c WHERE c.name = d.name "
                + "AND c.change IS NULL) THEN NULL ELSE d.count + coalesce((SELECT sum(c.change) "
                + "FROM _sluice_dangling_changes c WHERE c.name = d.name), 0) END FROM _sluice_dangling d")
        for row in rows where row.count == 2 { counts[row[0] ?? ""] = row[1] }
        return counts
    }
}
