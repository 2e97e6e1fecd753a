import SluiceRecords

/// The dangling counts of a run's end, the same in every store that keeps
/// rows.
extension RowStore {
    /// Links whose target row does not exist, per relationship
    /// (`Entity.relationship` for references, the link table's name for
    /// links), in schema order then link order; the references of the
    /// schemas in `counted` (counted early, on another connection) are taken
    /// from it instead of being counted again; a link table's count is the
    /// sum over the targets its rows may name (``LinkSchema/targets``). One
    /// scan of each other table per reference, and of each link table per
    /// target.
    package func danglingReferences(
        _ schemas: [TableSchema], _ links: [LinkSchema], counted: [String: [DanglingCount]] = [:]
    ) throws(StoreError) -> [DanglingCount] {
        var result: [DanglingCount] = []
        for schema in schemas {
            if let known = counted[schema.name] {
                result += known
            } else {
                result += try danglingReferences(of: schema)
            }
        }
        for link in links {
            var count = 0
            for target in link.targets { count += try danglingLinks(link, to: target) }
            result.append(DanglingCount(name: link.name, count: count, policy: link.missing))
        }
        return result
    }
}
