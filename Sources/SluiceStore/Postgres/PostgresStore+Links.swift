import SluiceBatching
@_spi(Machinery) import SluiceRecords

/// Link tables in PostgreSQL, with the SQLite store's semantics: per source,
/// links that equal the stored ones are left alone, different ones replace
/// them, `union` adds; stubs for missing targets; `replace-and-delete`
/// deletes the children a parent dropped. Each step is one statement over
/// the batch's staged links and sources.
extension PostgresStore {
    /// The temporary tables a link table's batches are copied into: the
    /// link rows that stand (`rows`), every source with whether its stored
    /// links may go (`sources`), and the targets linked before the batch
    /// (`before`, for `replace-and-delete`).
    struct LinkStage {
        var rows: String
        var sources: String
        var before: String
    }

    package func applyLinks(
        _ rows: RowArena, _ link: LinkSchema, entity: Int, mixedKeys: MixedKeyLog?
    ) throws(StoreError) {
        let sources = BatchRows.linkSources(rows, link, entity: entity, mixedKeys: mixedKeys)
        if try loadLinksDirectly(rows, sources, link) { return }
        let stage = try linkStage(link)
        let columns = linkColumns(link)
        let width = link.sourceColumns.count
        try copyLinks(rows, sources, link, columns, stage)

        let table = pgQuoted(link.name)
        let names = columns.map { pgQuoted($0.name) }
        let staged = columns.enumerated().map { $0.element.type.fromStaging("n.c\($0.offset)") }
        let sourceMatch = { (left: String, right: String) -> String in
            (0..<width).map { "\(left).\(names[$0]) = \(columns[$0].type.fromStaging("\(right).c\($0)"))" }.joined(
                separator: " AND ")
        }
        let stands = standingCondition(link, columns, "u")
        let action = "linking \(table)"

        // Each source's stored links read by the link table's key, from the
        // array of the batch's sources: a plain join let the planner scan
        // the whole link table per batch once the batch's keys were spread
        // over it, as an update file's are (2,000,000 events: 50 s), and a
        // lateral join scanned it once per source when the table had no
        // statistics yet (20,000 events again: 0.7 → 2.5 s). With the array
        // the worst plan is one scan.
        let firstSource = columns[0].type.fromStaging("r.c0")
        let storedOfSources = { (select: String) in
            "SELECT \(select) FROM \(table) x JOIN \(stage.sources) u ON \(sourceMatch("x", "u")) "
                + "WHERE x.\(names[0]) = ANY (ARRAY(SELECT \(firstSource) FROM \(stage.sources) r))"
        }
        if link.rule == .replaceAndDelete {
            try connection.execute(
                "INSERT INTO \(stage.before) "
                    + storedOfSources((0...width).map { "x.\(names[$0])" }.joined(separator: ", ")),
                "reading the links of \(table)")
        }
        // Sources whose stored links differ from the batch's lose them all:
        // the sources in the difference of the two sets of rows, taken both
        // ways by hashing (a per-source EXCEPT read the staged rows once per
        // source: 0.6 s per batch of 2,000 events).
        let storedRows = storedOfSources(names.map { "x.\($0)" }.joined(separator: ", ")) + " AND u._unlink"
        // The batch's sources as a range of the first key column, for the
        // check below.
        let range =
            "x.\(names[0]) BETWEEN (SELECT min(\(firstSource)) FROM \(stage.sources) r) AND (SELECT max(\(firstSource)) FROM \(stage.sources) r)"
        let stagedRows =
            "SELECT \(staged.joined(separator: ", ")) FROM \(stage.rows) n JOIN \(stage.sources) u "
            + "ON \(storedMatchStaged(width, names, columns, "u", "n")) WHERE u._unlink"
        // A batch none of whose sources has stored links within its range
        // of keys (the key-ordered apply into a table it fills; several
        // importers of disjoint key ranges) has nothing to compare: one
        // descent of the link table's key says so.
        let follows =
            try connection.strings(
                "SELECT NOT EXISTS (SELECT 1 FROM \(table) x WHERE \(range))",
                "looking for stored links of the batch's sources in \(table)"
            ).first == "t"
        if !follows {
            // Without statistics the planner takes a temporary table for
            // large and joins it to the whole link table: 200,000 events
            // took 16 s against 8 s with them.
            try connection.execute(
                "ANALYZE \(stage.rows), \(stage.sources)", "analysing the staged links of \(pgQuoted(link.name))")
        }
        // The changed sources' links go by the link table's key: a join let
        // the planner scan the whole table (2,000,000 events: 230 ms a batch).
        let changedStanding =
            "SELECT \((0..<width).map { "c.c\($0)" }.joined(separator: ", ")) FROM changed c WHERE \(standingCondition(link, columns, "c"))"
        let deleteChanged =
            width == 1
            ? "DELETE FROM \(table) l WHERE l.\(names[0]) = ANY (ARRAY(\(changedStanding)))"
            : "DELETE FROM \(table) l USING (\(changedStanding)) c WHERE \((0..<width).map { "l.\(names[$0]) = c.c\($0)" }.joined(separator: " AND "))"
        let removed =
            follows
            ? 0
            : try connection.execute(
                "WITH stored AS MATERIALIZED (\(storedRows)), staged AS MATERIALIZED (\(stagedRows)), "
                    + "changed AS (SELECT DISTINCT \((0..<width).map { "\(names[$0]) AS c\($0)" }.joined(separator: ", ")) "
                    + "FROM ((SELECT * FROM stored EXCEPT SELECT * FROM staged) UNION ALL (SELECT * FROM staged EXCEPT SELECT * FROM stored)) diff), "
                    + "d AS (\(deleteChanged) RETURNING 1) SELECT count(*) FROM d", "unlinking \(table)"
            ).int(0, 0)

        // Then the rows that stand go in, unless the source keeps equal ones.
        var conditions = [stands]
        if !follows {
            conditions.append("(NOT u._unlink OR NOT EXISTS (SELECT 1 FROM \(table) x WHERE \(sourceMatch("x", "n"))))")
        }
        if link.storedTargetsOnly {
            conditions.append(
                "EXISTS (SELECT 1 FROM \(pgQuoted(link.targetTable)) t WHERE t.\(pgQuoted(link.targetKey)) = \(staged[width]))"
            )
        }
        var parts = [
            "cand AS (SELECT \(zip(staged, names).map { "\($0) AS \($1)" }.joined(separator: ", ")) FROM \(stage.rows) n "
                + "JOIN \(stage.sources) u ON \(storedMatchStaged(width, names, columns, "u", "n")) WHERE \(conditions.joined(separator: " AND ")))",
            "ins AS (INSERT INTO \(table) (\(names.joined(separator: ", "))) SELECT * FROM cand "
                + "ORDER BY \((0..<width).map { names[$0] }.joined(separator: ", ")), \"position\" ON CONFLICT DO NOTHING RETURNING 1)",
        ]
        let stubTargets: [(table: String, key: String, entity: String?)] =
            link.missing != .stub
            ? []
            : link.choices.isEmpty
                ? [(link.targetTable, link.targetKey, nil)] : link.choices.map { ($0.table, $0.key, $0.value) }
        for (index, target) in stubTargets.enumerated() {
            let which = target.entity.map { " AND \(pgQuoted(LinkSchema.entityColumnName)) = \(pgLiteral($0))" } ?? ""
            parts.append(
                "st\(index) AS (INSERT INTO \(pgQuoted(target.table)) (\(pgQuoted(target.key))) SELECT DISTINCT \(names[width]) FROM cand "
                    + "WHERE \(names[width]) IS NOT NULL\(which) ORDER BY 1 ON CONFLICT DO NOTHING RETURNING 1)")
        }
        let counts = (["(SELECT count(*) FROM ins)"] + stubTargets.indices.map { "(SELECT count(*) FROM st\($0))" })
            .joined(separator: ", ")
        let result = try connection.execute("WITH \(parts.joined(separator: ", ")) SELECT \(counts)", action)
        sideWrites.linksRemoved[link.name, default: 0] += removed
        sideWrites.linksAdded[link.name, default: 0] += result.int(0, 0)
        for (index, target) in stubTargets.enumerated() {
            sideWrites.stubs[target.table, default: 0] += result.int(0, index + 1)
        }

        if link.rule == .replaceAndDelete {
            let deleted = try connection.execute(
                "WITH d AS (DELETE FROM \(pgQuoted(link.targetTable)) t USING \(stage.before) b WHERE t.\(pgQuoted(link.targetKey)) = b.\(names[width]) "
                    + "AND NOT EXISTS (SELECT 1 FROM \(stage.rows) n WHERE \(sourceMatch("b", "n")) "
                    + "AND \(staged[width]) = b.\(names[width])) RETURNING 1) SELECT count(*) FROM d",
                "deleting dropped children of \(table)"
            ).int(0, 0)
            sideWrites.childrenDeleted[link.targetTable, default: 0] += deleted
        }
    }

    /// `left.source = right's staged source` where `left` has the link
    /// table's column names (`u` of the sources table is staged too, so
    /// both sides are cast).
    private func storedMatchStaged(
        _ width: Int, _ names: [String], _ columns: [(name: String, type: PostgresType)], _ left: String,
        _ right: String
    ) -> String {
        (0..<width).map {
            "\(columns[$0].type.fromStaging("\(left).c\($0)")) = \(columns[$0].type.fromStaging("\(right).c\($0)"))"
        }
        .joined(separator: " AND ")
    }

    /// The part of a statement that deletes the links of the source rows a
    /// CTE named `gone` returned (their key columns `keys`, quoted): `l` +
    /// `index` holding a row per link deleted. The first source column is
    /// matched against an array of `gone`'s keys, which PostgreSQL looks up
    /// in the link table's primary key (whose first columns are the
    /// source's) key by key; a join with `gone` it planned as a merge over
    /// the whole index at some sizes, since it cannot estimate the CTE's
    /// keys: all 500,599 link rows read (393 ms) to delete 1,000 of 200,000
    /// events' links, against 60 ms by key (`deletingSourcesReadsOnlyTheirLinks`).
    func goneLinksDeletion(_ link: LinkSchema, _ index: Int, keys: [String]) -> String {
        let columns = link.sourceColumns.map { pgQuoted($0.name) }
        var condition = "l.\(columns[0]) = ANY(ARRAY(SELECT g.\(keys[0]) FROM gone g))"
        if columns.count > 1 {
            condition +=
                " AND (\(columns.map { "l.\($0)" }.joined(separator: ", "))) IN "
                + "(SELECT \(keys.map { "g.\($0)" }.joined(separator: ", ")) FROM gone g)"
        }
        return "l\(index) AS (DELETE FROM \(pgQuoted(link.name)) l WHERE \(condition) RETURNING 1)"
    }

    /// True when the link's source is still stored, for a source table this
    /// run deleted rows of by key (a record written, then deleted later in
    /// the run, keeps no links); `TRUE` otherwise.
    private func standingCondition(_ link: LinkSchema, _ columns: [(name: String, type: PostgresType)], _ alias: String)
        -> String
    {
        guard tables[link.sourceTable]?.deletedByKey == true else { return "TRUE" }
        let match = link.sourceKeys.enumerated().map {
            "t.\(pgQuoted($0.element)) = \(columns[$0.offset].type.fromStaging("\(alias).c\($0.offset)"))"
        }
        return "EXISTS (SELECT 1 FROM \(pgQuoted(link.sourceTable)) t WHERE \(match.joined(separator: " AND ")))"
    }

    /// The link table's staging tables, emptied (made on first use).
    private func linkStage(_ link: LinkSchema) throws(StoreError) -> LinkStage {
        if let stage = linkStages[link.name] {
            if !stagedInTransaction.insert(stage.rows).inserted {
                try connection.execute(
                    "TRUNCATE \(stage.rows), \(stage.sources), \(stage.before)",
                    "emptying the staging of \(pgQuoted(link.name))")
            }
            return stage
        }
        stagingTables += 1
        let stage = LinkStage(
            rows: pgQuoted("_sluice_links_\(stagingTables)"), sources: pgQuoted("_sluice_sources_\(stagingTables)"),
            before: pgQuoted("_sluice_before_\(stagingTables)"))
        let columns = linkColumns(link)
        let width = link.sourceColumns.count
        let action = "making the staging of \(pgQuoted(link.name))"
        try connection.execute(
            "CREATE TEMP TABLE \(stage.rows) (\(columns.enumerated().map { "c\($0.offset) \($0.element.type.staging)" }.joined(separator: ", "))) \(Self.emptiedAtCommit)",
            action)
        try connection.execute(
            "CREATE TEMP TABLE \(stage.sources) (\((0..<width).map { "c\($0) \(columns[$0].type.staging)" }.joined(separator: ", ")), _unlink boolean NOT NULL) \(Self.emptiedAtCommit)",
            action)
        try connection.execute(
            "CREATE TEMP TABLE \(stage.before) (\((0...width).map { "\(pgQuoted(columns[$0].name)) \(columns[$0].type.sql)" }.joined(separator: ", "))) \(Self.emptiedAtCommit)",
            action)
        linkStages[link.name] = stage
        stagedInTransaction.insert(stage.rows)
        return stage
    }

    /// Writes cell `column` of link row `row` into the COPY as a value of
    /// the link table's column; a value its type cannot hold fails naming
    /// the record and the column.
    func encodeLink(
        _ rows: RowArena, _ row: Int, _ column: Int, _ columns: [(name: String, type: PostgresType)],
        _ bytes: UnsafeBufferPointer<UInt8>, into buffer: inout CopyBuffer, _ action: String
    ) throws(StoreError) {
        do throws(CellMismatch) {
            try columns[column].type.encode(rows[row, column], bytes, into: &buffer)
        } catch {
            throw StoreError(
                path: name, action: action,
                message:
                    "record \(KeyOrderSorter.record(ofOrdinal: rows.ordinals[row])): column \(pgQuoted(columns[column].name)) is \(columns[column].type.sql), "
                    + "and the value \(error.cell) is not one", code: 0)
        }
    }

    /// Copies the rows that stand and every source of the batch.
    private func copyLinks(
        _ rows: RowArena, _ sources: [BatchRows.LinkSource], _ link: LinkSchema,
        _ columns: [(name: String, type: PostgresType)],
        _ stage: LinkStage
    ) throws(StoreError) {
        let width = link.sourceColumns.count
        let action = "copying the links of \(pgQuoted(link.name))"
        try rows.bytes.withUnsafeBufferPointer { (bytes) throws(StoreError) in
            let encode = { (buffer: inout CopyBuffer, row: Int, column: Int) throws(StoreError) in
                try self.encodeLink(rows, row, column, columns, bytes, into: &buffer, action)
            }
            try connection.copy("COPY \(stage.rows) FROM STDIN (FORMAT binary)", action) {
                (buffer) throws(StoreError) in
                for source in sources {
                    for row in source.kept {
                        buffer.beginRow(fields: columns.count)
                        for column in columns.indices { try encode(&buffer, row, column) }
                    }
                }
            }
            try connection.copy("COPY \(stage.sources) FROM STDIN (FORMAT binary)", action) {
                (buffer) throws(StoreError) in
                for source in sources {
                    buffer.beginRow(fields: width + 1)
                    for column in 0..<width { try encode(&buffer, source.row, column) }
                    buffer.bool(source.unlink)
                }
            }
        }
    }
}
