import SluiceBatching
@_spi(Machinery) import SluiceRecords

/// A first load into empty tables, sorted by the server: each group's rows
/// are binary-`COPY`d, in input order, into a temporary table per table
/// while sluice reads on, with their place in the input and the columns
/// they mention; once every input is read, one merge per table makes them
/// one row per key as the sort would (the last occurrence; where a key's
/// occurrences differ, each column from the last that mentions it, or the
/// last whole under `replace`) and writes them with the statements of the
/// per-batch apply (``PostgresStore/write(group:_:size:_:_:_:)``, the stubs,
/// the seen keys, ``PostgresStore/applyStagedLinks(_:_:)``), one transaction
/// per table, the inputs' checkpoints last. A run killed before that leaves
/// the tables as they were (the temporary tables go with the session); one
/// killed between two tables leaves tables that are no longer empty, which
/// the next run (resumed or not) merges in batches as any other run.
/// Memory: none per row on the client; the server holds the staged rows.
final class PostgresStagedLoad: StagedLoad {
    /// The bits of a staged row's present-column mask: columns 0 to 62.
    static let maskBits = 63

    private let store: PostgresStore
    /// The entity tables, each after those its references point to.
    private let order: [TableSchema]
    private let links: [LinkSchema]
    /// Per entity table staged: its temporary table and entity index.
    private var entities: [String: (load: String, entity: Int)] = [:]
    /// Per link table staged: its temporary table.
    private var linkLoads: [String: String] = [:]
    /// Groups staged, which place each row in the input.
    private var groups: Int64 = 0
    private(set) var checkpoints: [Checkpoint] = []

    init(store: PostgresStore, order: [TableSchema], links: [LinkSchema]) {
        self.store = store
        self.order = order
        self.links = links
    }

    /// `schemas` with each after those its references point to, nil when a
    /// reference leads back to its own entity. O(references).
    static func mergeOrder(_ schemas: [TableSchema]) -> [TableSchema]? {
        let byName = Dictionary(schemas.map { ($0.name, $0) }, uniquingKeysWith: { first, _ in first })
        var ordered: [TableSchema] = []
        var done: [String: Bool] = [:]
        var cyclic = false
        func visit(_ schema: TableSchema) {
            if let finished = done[schema.name] {
                if !finished { cyclic = true }
                return
            }
            done[schema.name] = false
            for reference in schema.references {
                if let target = byName[reference.targetTable] { visit(target) }
            }
            done[schema.name] = true
            ordered.append(schema)
        }
        for schema in schemas { visit(schema) }
        return cyclic ? nil : ordered
    }

    // MARK: - Staging

    func stage(_ group: BatchGroup) throws(StoreError) {
        groups += 1
        let base = groups << 40
        for batch in group.batches {
            if let link = batch.link {
                try stageLinks(batch.rows, link, base)
            } else {
                try stageRows(batch, base)
            }
        }
        if let checkpoint = group.checkpoint {
            if let index = checkpoints.firstIndex(where: { $0.input == checkpoint.input }) {
                checkpoints[index] = checkpoint
            } else {
                checkpoints.append(checkpoint)
            }
        }
    }

    /// Copies an entity batch's rows: their place (the group's `base` and
    /// the row's index), the bits of the columns they mention, the cells.
    private func stageRows(_ batch: Batch, _ base: Int64) throws(StoreError) {
        let table = try store.table(for: batch.schema)
        let columns = table.schema.columns.count
        let load: String
        if let known = entities[table.schema.name] {
            load = known.load
        } else {
            load = try makeLoad(
                "_sluice_load_", "_mask bigint NOT NULL", table.types.map(\.staging), table.schema.name)
            entities[table.schema.name] = (load, batch.entity)
        }
        let rows = batch.rows
        let action = "staging rows of \(pgQuoted(table.schema.name))"
        let names = (["_seq", "_mask"] + (0..<columns).map { "c\($0)" }).joined(separator: ", ")
        try store.connection.copy("COPY \(load) (\(names)) FROM STDIN (FORMAT binary)", action) {
            (buffer) throws(StoreError) in
            try rows.bytes.withUnsafeBufferPointer { (bytes) throws(StoreError) in
                for row in 0..<rows.rowCount {
                    guard !rows.isDeletion(row) else {
                        throw StoreError(
                            path: store.name, action: action,
                            message: "record \(rows.ordinals[row]) deletes a key, which a staged load cannot", code: 0)
                    }
                    var mask: Int64 = 0
                    for column in 0..<columns where rows[row, column] != .absent { mask |= 1 << column }
                    buffer.beginRow(fields: columns + 2)
                    buffer.int64(base | Int64(row))
                    buffer.int64(mask)
                    try store.copyCells(rows, row, bytes, table, into: &buffer, action)
                }
            }
        }
    }

    /// Copies a link batch's rows: their place (the group's `base` and the
    /// record's number, as the sort orders them), whether the item is
    /// absent (an empty or null list), the cells.
    private func stageLinks(_ rows: RowArena, _ link: LinkSchema, _ base: Int64) throws(StoreError) {
        let columns = store.linkColumns(link)
        let load: String
        if let known = linkLoads[link.name] {
            load = known
        } else {
            load = try makeLoad(
                "_sluice_load_links_", "_absent boolean NOT NULL", columns.map { $0.type.staging }, link.name)
            linkLoads[link.name] = load
        }
        let width = link.sourceColumns.count
        let action = "staging the links of \(pgQuoted(link.name))"
        try store.connection.copy("COPY \(load) FROM STDIN (FORMAT binary)", action) { (buffer) throws(StoreError) in
            try rows.bytes.withUnsafeBufferPointer { (bytes) throws(StoreError) in
                for row in 0..<rows.rowCount {
                    buffer.beginRow(fields: columns.count + 2)
                    buffer.int64(base | Int64(rows.ordinals[row]))
                    buffer.bool(rows[row, width] == .absent)
                    for column in columns.indices {
                        try store.copyLinkCell(rows, row, column, columns, bytes, into: &buffer, action)
                    }
                }
            }
        }
    }

    /// Makes a temporary table for `table`'s staged rows: the row's place,
    /// `extra`, then one column per cell of the `types` given. It lasts as
    /// long as the session.
    private func makeLoad(_ prefix: String, _ extra: String, _ types: [String], _ table: String) throws(StoreError)
        -> String
    {
        store.stagingTables += 1
        let load = pgQuoted("\(prefix)\(store.stagingTables)")
        let columns = types.enumerated().map { ", c\($0.offset) \($0.element)" }.joined()
        try store.connection.execute(
            "CREATE TEMP TABLE \(load) (_seq bigint NOT NULL, \(extra)\(columns))",
            "making the staging of \(pgQuoted(table))")
        return load
    }

    // MARK: - Merging

    func merge(mixedKeys: MixedKeyLog?) throws(StoreError) -> [Int: EntityCounts] {
        var counts: [Int: EntityCounts] = [:]
        for schema in order {
            guard let staged = entities[schema.name] else { continue }
            try transaction { () throws(StoreError) in
                counts[staged.entity, default: EntityCounts()].add(try mergeRows(schema, staged.load, mixedKeys))
            }
        }
        for link in links {
            guard let load = linkLoads[link.name] else { continue }
            let bulk = try store.beginBulkLinks(link)
            try transaction { () throws(StoreError) in try mergeLinks(link, load) }
            if bulk { try store.endBulkLinks(link) }
        }
        return counts
    }

    /// Runs `body` in a group transaction, committed unless the run is
    /// cancelled, rolled back on error. Without JIT compilation: a merge's
    /// statements read every row staged, which makes their estimated cost
    /// pass the JIT threshold, and compiling them took 0.9 s a statement
    /// (200,000 events) for plans that mostly insert.
    private func transaction(_ body: () throws(StoreError) -> Void) throws(StoreError) {
        try store.beginGroup()
        do throws(StoreError) {
            try store.connection.execute("SET LOCAL jit = off", "turning JIT compilation off for the merge")
            try body()
            try store.commitUnlessAborted()
        } catch {
            store.rollbackGroup()
            throw error
        }
    }

    /// One row per key of `schema`'s staged rows into its staging table
    /// (grouped by the columns they mention), then the per-batch apply's
    /// writes, seen keys and stubs over it.
    private func mergeRows(_ schema: TableSchema, _ load: String, _ mixedKeys: MixedKeyLog?) throws(StoreError)
        -> EntityCounts
    {
        let table = try store.table(for: schema)
        let name = pgQuoted(schema.name)
        let connection = store.connection
        let cells = schema.columns.indices.map { "c\($0)" }.joined(separator: ", ")
        let keys = schema.keyColumns.map { "c\($0)" }
        let keyList = keys.joined(separator: ", ")
        // One pass over the keys: how many, how many occur more than once,
        // and whether every row mentions the same columns.
        let shape = try connection.execute(
            "SELECT count(*), count(*) FILTER (WHERE n > 1), coalesce(min(lo), 0), coalesce(max(hi), 0) "
                + "FROM (SELECT count(*) AS n, min(_mask) AS lo, max(_mask) AS hi FROM \(load) GROUP BY \(keyList)) g",
            "counting the keys of \(name)")
        let keyCount = shape.int(0, 0)
        let repeated = shape.int(0, 1)
        let oneMask = shape.int(0, 2) == shape.int(0, 3)
        var mixedCount = 0
        let mixed = pgQuoted("_sluice_mixed")
        if repeated > 0 {
            // The keys whose occurrences differ in the columns they mention
            // or in a value (as text, as it is stored): only theirs need
            // combining.
            try connection.execute(
                "CREATE TEMP TABLE \(mixed) ON COMMIT DROP AS SELECT \(keyList) FROM \(load) l "
                    + "WHERE (\(keyList)) IN (SELECT \(keyList) FROM \(load) GROUP BY \(keyList) HAVING count(*) > 1) "
                    + "GROUP BY \(keyList) HAVING count(DISTINCT (l._mask, \(schema.columns.indices.map { "l.c\($0)::text" }.joined(separator: ", ")))) > 1",
                "finding the keys of \(name) whose records differ")
            mixedCount = try connection.execute("SELECT count(*) FROM \(mixed)", "counting them").int(0, 0)
        }
        if mixedCount > 0 { mixedKeys?.distrust() }
        let combining = schema.combinesOccurrences && mixedCount > 0
        // The rows one per key, as a relation shaped as the staging table:
        // the staged rows themselves when no key repeats, the last
        // occurrence of each when no occurrences need combining and every
        // row mentions the same columns; else filled into the staging table.
        let rows: String
        var groups: [(bits: Int, size: Int)] = []
        if repeated == 0 {
            rows = "(SELECT _mask AS _group, \(cells) FROM \(load))"
            let masks = try connection.execute(
                "SELECT _mask, count(*) FROM \(load) GROUP BY 1 ORDER BY 1", "grouping the rows of \(name)")
            groups = (0..<masks.rowCount).map { (masks.int($0, 0), masks.int($0, 1)) }
        } else if oneMask && !combining {
            rows =
                "(SELECT DISTINCT ON (\(keyList)) _mask AS _group, \(cells) FROM \(load) ORDER BY \(keyList), _seq DESC)"
            groups = [(shape.int(0, 2), keyCount)]
        } else {
            rows = try store.stageTable(table)
            var select = "SELECT _mask, \(cells) FROM (SELECT DISTINCT ON (\(keyList)) * FROM \(load) l"
            if combining {
                select +=
                    " WHERE NOT EXISTS (SELECT 1 FROM \(mixed) x WHERE \(keys.map { "x.\($0) = l.\($0)" }.joined(separator: " AND ")))"
            }
            select += " ORDER BY \(keyList), _seq DESC) r"
            if combining {
                let combined = schema.columns.indices.map { column in
                    schema.keyColumns.contains(column)
                        ? "c\(column)"
                        : "(array_agg(c\(column) ORDER BY _seq DESC) FILTER (WHERE _mask & \(Int64(1) << column) <> 0))[1]"
                }
                select +=
                    " UNION ALL SELECT bit_or(_mask), \(combined.joined(separator: ", ")) FROM \(load) JOIN \(mixed) "
                    + "USING (\(keyList)) GROUP BY \(keyList)"
            }
            try connection.execute(
                "INSERT INTO \(rows) (_group, \(cells)) \(select)", "making the rows of \(name) one per key")
            let masks = try connection.execute(
                "SELECT _group, count(*) FROM \(rows) GROUP BY 1 ORDER BY 1", "grouping the rows of \(name)")
            groups = (0..<masks.rowCount).map { (masks.int($0, 0), masks.int($0, 1)) }
        }
        if schema.mode == .updateOnly, rows == table.stage {
            try connection.execute("ANALYZE \(rows)", "analysing the rows of \(name)")
        }
        var counts = EntityCounts()
        for group in groups {
            var mask = ColumnMask()
            for column in schema.columns.indices where group.bits & (1 << column) != 0 { mask.insert(column) }
            counts.add(try store.write(group: group.bits, mask, size: group.size, rows, table, schema.mode))
        }
        if store.seenTracked.contains(schema.name) { try store.markSeen(rows, table) }
        try store.stubStaged(schema, table, from: rows)
        return counts
    }

    /// The link rows that stand per source (the last record's under
    /// `replace`, those after the last empty or null list under `union`)
    /// and every source into the link table's staging, then the per-batch
    /// apply's statements over them.
    private func mergeLinks(_ link: LinkSchema, _ load: String) throws(StoreError) {
        let stage = try store.linkStage(link)
        let columns = store.linkColumns(link)
        let width = link.sourceColumns.count
        let sources = (0..<width).map { "c\($0)" }.joined(separator: ", ")
        let cells = columns.indices.map { "c\($0)" }.joined(separator: ", ")
        let name = pgQuoted(link.name)
        let standing: String
        let unlink: String
        if link.rule == .union {
            standing =
                "SELECT \(cells) FROM (SELECT *, max(_seq) FILTER (WHERE _absent) OVER (PARTITION BY \(sources)) AS _cut "
                + "FROM \(load)) l WHERE NOT _absent AND (_cut IS NULL OR _seq > _cut)"
            unlink = "bool_or(_absent)"
        } else {
            standing =
                "SELECT \(cells) FROM (SELECT *, max(_seq) OVER (PARTITION BY \(sources)) AS _last FROM \(load)) l "
                + "WHERE _seq = _last AND NOT _absent"
            unlink = "true"
        }
        try store.connection.execute("INSERT INTO \(stage.rows) \(standing)", "choosing the links of \(name)")
        try store.connection.execute(
            "INSERT INTO \(stage.sources) SELECT \(sources), \(unlink) FROM \(load) GROUP BY \(sources)",
            "listing the sources of \(name)")
        try store.applyStagedLinks(link, stage)
    }
}
