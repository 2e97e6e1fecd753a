import SluiceRecords

/// The dangling counts of a run's end, the same in every store that keeps
/// rows.
extension RowStore {
    /// Links whose target row does not exist, per relationship
    /// (``DanglingRelation/name``), in schema order then link order. A count
    /// the store keeps up to date (``storedDanglingCounts(_:)``) is read, not
    /// counted; the others are taken from `counted` (an entity's references,
    /// counted early on another connection) or counted now — one scan of
    /// each other table per reference, of each link table per target
    /// (``LinkSchema/targets``, summed) — and kept from then on
    /// (``keepDanglingCounts(_:)``).
    package func danglingReferences(
        _ schemas: [TableSchema], _ links: [LinkSchema], counted: [String: [DanglingCount]] = [:]
    ) throws(StoreError) -> [DanglingCount] {
        let kept = try keptDanglingCounts(schemas, links)
        var result: [DanglingCount] = []
        var counts: [(relation: DanglingRelation, count: Int)] = []
        for schema in schemas {
            let relations = schema.references.map { DanglingRelation.reference(schema, $0) }
            var fresh: [DanglingCount] = []
            if let early = counted[schema.name] {
                fresh = early
            } else if !relations.allSatisfy({ kept[$0.name] != nil }) {
                fresh = try danglingReferences(of: schema)
            }
            for (index, relation) in relations.enumerated() {
                if let count = kept[relation.name] {
                    result.append(relation.count(count))
                } else {
                    result.append(fresh[index])
                    counts.append((relation, fresh[index].count))
                }
            }
        }
        for link in links {
            let relation = DanglingRelation.link(link)
            var count = kept[link.name] ?? 0
            if kept[link.name] == nil {
                for target in link.targets { count += try danglingLinks(link, to: target) }
                counts.append((relation, count))
            }
            result.append(relation.count(count))
        }
        if !counts.isEmpty { try keepDanglingCounts(counts) }
        return result
    }

    /// The counts the store keeps of `schemas`' references and `links`.
    package func keptDanglingCounts(_ schemas: [TableSchema], _ links: [LinkSchema]) throws(StoreError) -> [String: Int]
    {
        try storedDanglingCounts(DanglingRelation.all(schemas, links))
    }
}
