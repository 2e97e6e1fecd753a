import SluiceBatching
@_spi(Machinery) import SluiceRecords

extension PostgresStore {
    /// A staged load (``PostgresStagedLoad``) when every table of `schemas`
    /// and `links` is empty — a first load, which the server then sorts
    /// while sluice reads — every entity has a key and fewer than 63
    /// columns (a staged row's present columns are one `bigint` of bits),
    /// and no entity refers to itself or to one that refers back (the
    /// merge takes each table whole, after the tables it refers to). Nil
    /// otherwise, and in a dry run. One `SELECT EXISTS` per table.
    package func stagedLoad(_ schemas: [TableSchema], links: [LinkSchema]) throws(StoreError) -> (any StagedLoad)? {
        guard !connection.isDryRun,
            schemas.allSatisfy({ !$0.keyColumns.isEmpty && $0.columns.count < PostgresStagedLoad.maskBits }),
            let order = PostgresStagedLoad.mergeOrder(schemas)
        else { return nil }
        for name in schemas.map(\.name) + links.map(\.name) {
            let stored = try connection.strings(
                "SELECT EXISTS (SELECT 1 FROM \(pgQuoted(name)))", "looking for rows in \(pgQuoted(name))")
            guard stored.first == "f" else { return nil }
        }
        return PostgresStagedLoad(store: self, order: order, links: links)
    }
}
