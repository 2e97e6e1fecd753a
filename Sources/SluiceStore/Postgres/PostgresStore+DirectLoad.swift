import SluiceBatching
@_spi(Machinery) import SluiceRecords

/// The first load of a table: an entity table that held no row when the run
/// first met it, and a link table empty at its first batch, get their
/// batches by a binary `COPY` straight into the table, as `pg_restore`
/// loads one, instead of a `COPY` into a staging table and an upsert (or a
/// link insert) from there. Every key of such a batch is new unless something
/// else wrote the table since (a stub, another importer, a key repeated
/// across batches in input order): the `COPY` runs under a savepoint, and a
/// key it finds stored (a unique violation) rolls it back to the savepoint;
/// the batch then takes the staged merge, and so does every later batch of
/// the table in the run. The batch's transaction, its commit and its
/// checkpoint are those of the staged merge: a kill rolls back the `COPY`
/// with the rest of the batch.
extension PostgresStore {
    /// 2000-01-01 UTC, from which PostgreSQL counts a timestamp's
    /// microseconds, in microseconds since 1970-01-01.
    static let postgresEpoch: Int64 = 946_684_800 * 1_000_000

    /// The savepoint of a batch's direct load.
    static let directLoad = "_sluice_direct_load"

    /// Copies `rows` at `order` (one row per key, in key order, none a
    /// deletion; `groups[i]` the index in `masks` of the columns row
    /// `order[i]` mentions) straight into `table`, one `COPY` per set of
    /// present columns (the absent ones take the column's default, as an
    /// insert naming the present ones gives them), and returns its counts:
    /// every row inserted. Returns nil, having written nothing, when the
    /// table is not loaded directly (it held rows when the run met it, its
    /// keys are recorded as seen, it stubs references, it is keyless or
    /// update-only, it has a decimal column, whose binary form is the
    /// server's own), when a key was stored already or when a date is not
    /// in the stored form. O(rows × masks) to pick the rows of each `COPY`,
    /// plus the server's inserts.
    func loadDirectly(
        _ rows: RowArena, _ order: [Int], _ groups: [Int], _ masks: [ColumnMask], into table: Table
    ) throws(StoreError) -> EntityCounts? {
        let schema = table.schema
        guard table.loadsDirectly, !table.types.contains(.numeric), !schema.keyColumns.isEmpty,
            schema.mode != .updateOnly,
            !seenTracked.contains(schema.name), !schema.references.contains(where: { $0.missing == .stub })
        else { return nil }
        let action = "copying rows into \(pgQuoted(schema.name))"
        try connection.execute("SAVEPOINT \(Self.directLoad)", action)
        var unencodable = false
        do throws(StoreError) {
            for (group, mask) in masks.enumerated() {
                try copyDirectly(rows, order, groups, group, mask, into: table, action, unencodable: &unencodable)
            }
            try connection.execute("RELEASE SAVEPOINT \(Self.directLoad)", action)
        } catch  where error.cause == .constraint || unencodable {
            try connection.execute("ROLLBACK TO SAVEPOINT \(Self.directLoad)", action)
            try connection.execute("RELEASE SAVEPOINT \(Self.directLoad)", action)
            table.loadsDirectly = false
            return nil
        }
        var counts = EntityCounts()
        counts.inserted = order.count
        return counts
    }

    /// One `COPY` of the rows of `group` (those that mention the columns of
    /// `mask`) into `table`'s present columns, in key order. A date goes in
    /// the server's binary form (microseconds since 2000-01-01 UTC), which
    /// the staging table leaves to a cast from text; a date cell not in
    /// the stored form sets `unencodable` and stops the `COPY`.
    private func copyDirectly(
        _ rows: RowArena, _ order: [Int], _ groups: [Int], _ group: Int, _ mask: ColumnMask, into table: Table,
        _ action: String, unencodable: inout Bool
    ) throws(StoreError) {
        let present = table.schema.columns.indices.filter { mask.contains($0) }
        let names = present.map { pgQuoted(table.schema.columns[$0].name) }.joined(separator: ", ")
        try connection.copy("COPY \(pgQuoted(table.schema.name)) (\(names)) FROM STDIN (FORMAT binary)", action) {
            (buffer) throws(StoreError) in
            try rows.bytes.withUnsafeBufferPointer { (bytes) throws(StoreError) in
                for (position, row) in order.enumerated() where groups[position] == group {
                    buffer.beginRow(fields: present.count)
                    for column in present {
                        guard table.types[column] == .timestamp, case .text(let offset, let length) = rows[row, column]
                        else {
                            try encode(rows, row, column, as: column, of: table, bytes, into: &buffer, action)
                            continue
                        }
                        let text = UnsafeBufferPointer(rebasing: bytes[Int(offset)..<Int(offset + length)])
                        guard let micros = DateText.storedMicroseconds(text) else {
                            unencodable = true
                            throw StoreError(
                                path: name, action: action,
                                message:
                                    "record \(KeyOrderSorter.record(ofOrdinal: rows.ordinals[row])): a date not in the stored form",
                                code: 0)
                        }
                        buffer.int64(micros - Self.postgresEpoch)
                    }
                }
            }
        }
    }

    /// Copies a link batch's rows that stand straight into its link table,
    /// when the table was empty at its first batch (``beginBulkLinks(_:)``
    /// dropped its target index) and the batch's sources have no stored
    /// links to compare with: one `COPY`, then, when the link stubs its
    /// targets, one insert of the targets the batch's source range links
    /// to (read back by the link table's key). Taken for `replace` links
    /// from one integer key column, with no target choices, no stored
    /// targets only and no source deleted by key in the run; a source that
    /// lists a target twice keeps its first, as the staged insert does.
    /// Returns false, having written nothing, when it does not apply, or
    /// when a link was stored already (a unique violation rolls the `COPY`
    /// back to its savepoint, and the table's later batches are staged).
    /// O(links) plus the server's inserts.
    func loadLinksDirectly(_ rows: RowArena, _ sources: [BatchRows.LinkSource], _ link: LinkSchema)
        throws(StoreError) -> Bool
    {
        guard bulkLinks.contains(link.name), link.rule == .replace, !link.storedTargetsOnly, link.choices.isEmpty,
            link.sourceColumns.count == 1, PostgresType(link.sourceColumns[0].type) == .bigint,
            tables[link.sourceTable]?.deletedByKey != true,
            let first = sources.first, case .integer(let low) = rows[first.row, 0],
            let last = sources.last, case .integer(let high) = rows[last.row, 0],
            let standing = Self.distinctLinks(rows, sources, link)
        else { return false }
        let columns = linkColumns(link)
        let table = pgQuoted(link.name)
        let action = "copying the links of \(table)"
        try connection.execute("SAVEPOINT \(Self.directLoad)", action)
        var stubs = 0
        do throws(StoreError) {
            let names = columns.map { pgQuoted($0.name) }.joined(separator: ", ")
            try connection.copy("COPY \(table) (\(names)) FROM STDIN (FORMAT binary)", action) {
                (buffer) throws(StoreError) in
                try rows.bytes.withUnsafeBufferPointer { (bytes) throws(StoreError) in
                    for row in standing {
                        buffer.beginRow(fields: columns.count)
                        for column in columns.indices {
                            try encodeLink(rows, row, column, columns, bytes, into: &buffer, action)
                        }
                    }
                }
            }
            if link.missing == .stub {
                let source = pgQuoted(columns[0].name)
                let target = pgQuoted(link.targetColumn.name)
                stubs = try connection.execute(
                    "INSERT INTO \(pgQuoted(link.targetTable)) (\(pgQuoted(link.targetKey))) "
                        + "SELECT DISTINCT l.\(target) FROM \(table) l WHERE l.\(source) BETWEEN $1 AND $2 "
                        + "ORDER BY 1 ON CONFLICT DO NOTHING",
                    "creating stubs in \(pgQuoted(link.targetTable))", [String(low), String(high)]
                ).affected
            }
            try connection.execute("RELEASE SAVEPOINT \(Self.directLoad)", action)
        } catch  where error.cause == .constraint {
            try connection.execute("ROLLBACK TO SAVEPOINT \(Self.directLoad)", action)
            try connection.execute("RELEASE SAVEPOINT \(Self.directLoad)", action)
            bulkLinks.remove(link.name)
            return false
        }
        sideWrites.linksAdded[link.name, default: 0] += standing.count
        if link.missing == .stub { sideWrites.stubs[link.targetTable, default: 0] += stubs }
        return true
    }

    /// The link rows that stand, in source order, each source's repeats of
    /// a link key left out after the first (its position when the link is
    /// ordered, else its target); nil when a source stands with more than
    /// ``directLinksPerSource`` rows, whose repeats the staged insert finds
    /// cheaper. O(links × links of a source).
    private static func distinctLinks(_ rows: RowArena, _ sources: [BatchRows.LinkSource], _ link: LinkSchema)
        -> [Int]?
    {
        let keyColumn = link.ordered ? link.sourceColumns.count + 1 : link.sourceColumns.count
        var standing: [Int] = []
        for source in sources {
            guard source.kept.count <= directLinksPerSource else { return nil }
            let start = standing.count
            for row in source.kept
            where !standing[start...].contains(where: { rows.compare(rows[$0, keyColumn], rows[row, keyColumn]) == 0 })
            {
                standing.append(row)
            }
        }
        return standing
    }

    /// The most links a source may stand with in a directly loaded batch.
    static let directLinksPerSource = 64

    /// Whether `schema`'s stored table holds no row (one probe of its first
    /// page) and stores each mapped column as the type sluice makes it, whose
    /// binary form the direct `COPY` writes (an adopted `integer` or `date`
    /// column takes another).
    func isEmptyWithOwnTypes(_ schema: TableSchema) throws(StoreError) -> Bool {
        let stored = Dictionary(try storedColumnTypes(schema.name), uniquingKeysWith: { first, _ in first })
        guard schema.columns.allSatisfy({ stored[$0.name] == PostgresType($0.type).storedName }) else { return false }
        return try connection.strings(
            "SELECT NOT EXISTS (SELECT 1 FROM \(pgQuoted(schema.name)))", "looking for rows in \(pgQuoted(schema.name))"
        ).first == "t"
    }
}
