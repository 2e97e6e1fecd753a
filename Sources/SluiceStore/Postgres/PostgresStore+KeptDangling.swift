import SluiceRecords

/// Dangling counts kept up to date instead of counted again at every run's
/// end, as in SQLite, in a shape that lets several importers write at once:
/// `_sluice_dangling` holds each relationship's count as of its last fold
/// (NULL: unknown), and statement-level triggers with transition tables on
/// the referring, link and target tables append what each statement
/// changed to `_sluice_dangling_changes` (a row only for a statement that
/// changed a count; NULL: unknown). No trigger updates a shared row, so
/// concurrent importers never wait on one another for a count; each read
/// at a run's start and end folds the committed changes into the counts in
/// one statement. A trigger counts one probe of an index per row its
/// statement wrote (the target's key, the referring column's index, the
/// link table's target index), in proportion to the change.
///
/// A trigger sees its own transaction's snapshot, so two importers writing
/// a reference and its target at once could each miss the other's row:
/// a run that another run of the ledger overlapped keeps no count (NULL),
/// and the next run alone counts them again. A count is also unknown, and
/// counted again at a run's end, in a store made before (no table), for a
/// relationship new to the mapping or whose target, column or link targets
/// changed, after a type migration, while a link table is bulk-loaded
/// without its target index, and for a self-reference (`parent: Post` of
/// Post) whose target rows are inserted while references dangle.
extension PostgresStore {
    /// The table of kept counts: `name` (``DanglingRelation/name``), `id`
    /// (which names its triggers), `count`, `tables` (those its triggers
    /// are on or read) and `definition` (its triggers' SQL).
    static let danglingTable = "_sluice_dangling"
    /// The changes the triggers append: `name`, `change` (NULL: unknown).
    static let danglingChanges = "_sluice_dangling_changes"

    /// The counts this store keeps of those of `relations` whose triggers
    /// are exactly the ones ``danglingTriggers(_:id:)`` makes now, and whose
    /// count is known; none while another run of the ledger overlaps this
    /// one. Folds the committed changes first (not in a dry run, whose
    /// transaction would hold their rows). Three statements, each
    /// in proportion to the relationships and the changes not folded yet.
    package func storedDanglingCounts(_ relations: [DanglingRelation]) throws(StoreError) -> [String: Int] {
        let action = "reading the kept dangling counts"
        guard try Self.exists(Self.danglingTable, action, connection) else { return [:] }
        if let runID, try connection.strings("SELECT \(Self.alone(runID))", action).first != "t" { return [:] }
        if !connection.isDryRun {
            try connection.execute(
                "WITH f AS (DELETE FROM \(Self.danglingChanges) RETURNING name, change), "
                    + "s AS (SELECT name, sum(change) AS change, bool_or(change IS NULL) AS unknown "
                    + "FROM f GROUP BY name) "
                    + "UPDATE \(Self.danglingTable) d SET count = CASE WHEN s.unknown THEN NULL "
                    + "ELSE d.count + s.change END FROM s WHERE d.name = s.name", action)
        }
        let stored = try connection.execute(
            "SELECT d.name, d.id, d.count + coalesce((SELECT sum(c.change) FROM \(Self.danglingChanges) c "
                + "WHERE c.name = d.name), 0), d.definition, (SELECT count(*) FROM pg_trigger t "
                + "WHERE t.tgname LIKE '\\_sluice\\_dangling\\_' || d.id || '\\_%') FROM \(Self.danglingTable) d "
                + "WHERE d.count IS NOT NULL AND NOT EXISTS (SELECT 1 FROM \(Self.danglingChanges) c "
                + "WHERE c.name = d.name AND c.change IS NULL)", action)
        var rows: [String: Int] = [:]
        for row in 0..<stored.rowCount { rows[stored.value(row, 0) ?? ""] = row }
        var kept: [String: Int] = [:]
        for relation in relations {
            guard let row = rows[relation.name] else { continue }
            let triggers = danglingTriggers(relation, id: stored.int(row, 1))
            guard stored.value(row, 3) == triggers.joined(separator: ";\n"), stored.int(row, 4) == triggers.count / 2
            else { continue }
            kept[relation.name] = stored.int(row, 2)
        }
        return kept
    }

    /// Records `counts` and (re)makes each relationship's triggers, in one
    /// transaction under the schema lock, so that the counts follow every
    /// later write. A run that another run of the ledger overlapped records
    /// them unknown (its count may have missed the other's rows) and leaves
    /// the triggers as they are: making a trigger locks its table against
    /// the other run's writes, whose transaction may be waiting for this
    /// one's schema lock. O(relations) statements.
    package func keepDanglingCounts(_ counts: [(relation: DanglingRelation, count: Int)]) throws(StoreError) {
        let action = "keeping the dangling counts"
        try withSchemaLock(action) { () throws(StoreError) in
            try connection.execute(
                "CREATE TABLE IF NOT EXISTS \(Self.danglingTable) (name text PRIMARY KEY, "
                    + "id bigint GENERATED ALWAYS AS IDENTITY UNIQUE, count bigint, tables text[] NOT NULL, "
                    + "definition text NOT NULL); "
                    + "CREATE TABLE IF NOT EXISTS \(Self.danglingChanges) (name text NOT NULL, change bigint)", action)
            let alone = try runID.map { id throws(StoreError) in
                try connection.strings("SELECT \(Self.alone(id))", action).first == "t"
            }
            for (relation, count) in counts {
                guard alone != false else {
                    try connection.execute(
                        "INSERT INTO \(Self.danglingTable) (name, count, tables, definition) VALUES ($1, NULL, $2, '') "
                            + "ON CONFLICT (name) DO UPDATE SET count = NULL", action,
                        [relation.name, Self.danglingTables(relation)])
                    continue
                }
                let id = try connection.execute(
                    "INSERT INTO \(Self.danglingTable) (name, count, tables, definition) VALUES ($1, $2, $3, '') "
                        + "ON CONFLICT (name) DO UPDATE SET count = excluded.count, tables = excluded.tables "
                        + "RETURNING id", action,
                    [relation.name, String(count), Self.danglingTables(relation)]
                ).int(0, 0)
                try dropDanglingTriggers(id, action)
                try connection.execute(
                    "DELETE FROM \(Self.danglingChanges) WHERE name = $1", action, [relation.name])
                let triggers = danglingTriggers(relation, id: id)
                for statement in triggers { try connection.execute(statement, action) }
                try connection.execute(
                    "UPDATE \(Self.danglingTable) SET definition = $1 WHERE id = \(id)", action,
                    [triggers.joined(separator: ";\n")])
            }
        }
    }

    /// Makes every kept count unknown, in the caller's transaction: after a
    /// column's type was altered, which may change what a reference names.
    func forgetDanglingCounts() throws(StoreError) {
        let action = "forgetting the dangling counts"
        guard try Self.exists(Self.danglingTable, action, connection) else { return }
        try connection.execute("UPDATE \(Self.danglingTable) SET count = NULL", action)
    }

    /// Drops the triggers of link table `link`'s count, in the caller's
    /// transaction: before a bulk load drops its target index, which the
    /// target tables' triggers probe. The run's end counts it again.
    func forgetDanglingCount(of link: LinkSchema) throws(StoreError) {
        let action = "forgetting the dangling count of \(pgQuoted(link.name))"
        guard try Self.exists(Self.danglingTable, action, connection) else { return }
        for id in try connection.strings("SELECT id FROM \(Self.danglingTable) WHERE name = $1", action, [link.name]) {
            try dropDanglingTriggers(Int(id ?? "") ?? 0, action)
        }
    }

    /// Drops the triggers (and forgets the counts) of the kept counts that
    /// read a table the database no longer has (dropped by hand, its entity
    /// gone from the mapping), in the schema transaction: they would fail
    /// every write to the tables they are on. O(kept counts).
    func forgetDanglingCountsOfMissingTables() throws(StoreError) {
        let action = "checking the kept dangling counts"
        guard try Self.exists(Self.danglingTable, action, connection) else { return }
        let gone = try connection.execute(
            "SELECT id, name FROM \(Self.danglingTable) d WHERE EXISTS "
                + "(SELECT 1 FROM unnest(d.tables) t WHERE to_regclass(quote_ident(t)) IS NULL)", action)
        for row in 0..<gone.rowCount {
            try dropDanglingTriggers(gone.int(row, 0), action)
            try connection.execute(
                "DELETE FROM \(Self.danglingTable) WHERE id = \(gone.int(row, 0))", action)
            try connection.execute(
                "DELETE FROM \(Self.danglingChanges) WHERE name = $1", action, [gone.value(row, 1)])
        }
    }

    /// Drops the trigger functions of count `id`, and with them (`CASCADE`)
    /// their triggers.
    private func dropDanglingTriggers(_ id: Int, _ action: String) throws(StoreError) {
        let functions = try connection.strings(
            "SELECT proname FROM pg_proc WHERE proname LIKE '\\_sluice\\_dangling\\_\(id)\\_%' "
                + "AND pronamespace = current_schema()::regnamespace", action)
        for function in functions {
            try connection.execute("DROP FUNCTION \(pgQuoted(function ?? ""))() CASCADE", action)
        }
    }

    /// The tables `relation`'s triggers are on or read.
    private static func danglingTables(_ relation: DanglingRelation) -> String {
        let tables: [String]
        switch relation {
        case .reference(let schema, let reference): tables = [schema.name, reference.targetTable]
        case .link(let link): tables = [link.name] + link.targets.map(\.table)
        }
        let elements = tables.map { "\"\($0.replacing("\\", with: "\\\\").replacing("\"", with: "\\\""))\"" }
        return "{" + elements.joined(separator: ",") + "}"
    }

    /// The statements that make `relation`'s triggers, each a function then
    /// its trigger, named `_sluice_dangling_ID_NN` (fired in that order).
    /// Each appends the change of its statement, if any. A reference
    /// (column c of S, to key K of T): rows of S inserted, deleted or
    /// updated add or take away those whose target is missing; rows of T
    /// inserted take away the rows of S naming them (the index on c), rows
    /// deleted add them. When S is T, a row deleted with its target was not
    /// dangling before, and rows of T inserted while references dangle make
    /// the count unknown (an update in the same statement may have named
    /// them). A link (per target): links inserted, deleted or updated to a
    /// missing target; a target row inserted or deleted takes away or adds
    /// the links naming it (the link table's target index), but for those
    /// its own statement inserted (a link and the stub of its target are
    /// written by one statement, whose link trigger found the target).
    func danglingTriggers(_ relation: DanglingRelation, id: Int) -> [String] {
        var triggers: [(event: String, table: String, change: String)] = []
        switch relation {
        case .reference(let schema, let reference):
            let (table, column) = (pgQuoted(schema.name), pgQuoted(schema.columns[reference.column].name))
            let (target, key) = (pgQuoted(reference.targetTable), pgQuoted(reference.targetKey))
            let isSelf = schema.name == reference.targetTable
            func missing(_ rows: String) -> String {
                "(SELECT count(*) FROM \(rows) r WHERE r.\(column) IS NOT NULL AND NOT EXISTS "
                    + "(SELECT 1 FROM \(target) t WHERE t.\(key) = r.\(column))"
                    + (isSelf && rows == "old_rows"
                        ? " AND r.\(column) NOT IN (SELECT o.\(key) FROM old_rows o))" : ")")
            }
            func naming(_ rows: String) -> String {
                "(SELECT count(*) FROM \(table) s WHERE s.\(column) IN (SELECT n.\(key) FROM \(rows) n))"
            }
            let current =
                "(SELECT d.count + coalesce((SELECT sum(c.change) FROM \(Self.danglingChanges) c "
                + "WHERE c.name = d.name), 0) FROM \(Self.danglingTable) d WHERE d.name = \(pgLiteral(relation.name)))"
            triggers = [
                ("INSERT", table, missing("new_rows")),
                ("DELETE", table, "-\(missing("old_rows"))"),
                ("UPDATE", table, "\(missing("new_rows")) - \(missing("old_rows"))"),
                (
                    "INSERT", target,
                    isSelf ? "CASE WHEN \(current) IS DISTINCT FROM 0 THEN NULL ELSE 0 END" : "-\(naming("new_rows"))"
                ),
                ("DELETE", target, naming("old_rows")),
            ]
        case .link(let link):
            let (table, column) = (pgQuoted(link.name), pgQuoted(link.targetColumn.name))
            let entity = pgQuoted(LinkSchema.entityColumnName)
            func names(_ target: LinkTarget, _ row: String) -> String {
                target.value.isEmpty ? "" : "\(row).\(entity) = \(pgLiteral(target.value)) AND "
            }
            func missing(_ rows: String) -> String {
                link.targets.map { target in
                    "(SELECT count(*) FROM \(rows) r WHERE \(names(target, "r"))NOT EXISTS "
                        + "(SELECT 1 FROM \(pgQuoted(target.table)) t WHERE t.\(pgQuoted(target.key)) = r.\(column)))"
                }.joined(separator: " + ")
            }
            triggers = [
                ("INSERT", table, missing("new_rows")),
                ("DELETE", table, "-(\(missing("old_rows")))"),
                ("UPDATE", table, "\(missing("new_rows")) - (\(missing("old_rows")))"),
            ]
            for target in link.targets {
                let (targetTable, key) = (pgQuoted(target.table), pgQuoted(target.key))
                let resolved =
                    "(SELECT count(*) FROM new_rows n JOIN \(targetTable) t ON t.\(key) = n.\(key) JOIN \(table) l "
                    + "ON \(names(target, "l"))l.\(column) = n.\(key) WHERE NOT (l.xmin = t.xmin AND l.cmin = t.cmin))"
                let orphaned =
                    "(SELECT count(*) FROM \(table) l WHERE \(names(target, "l"))l.\(column) IN "
                    + "(SELECT o.\(key) FROM old_rows o))"
                triggers += [("INSERT", targetTable, "-\(resolved)"), ("DELETE", targetTable, orphaned)]
            }
        }
        return triggers.enumerated().flatMap { index, trigger in
            let name = pgQuoted("_sluice_dangling_\(id)_" + (index < 10 ? "0" : "") + String(index))
            let transition =
                switch trigger.event {
                case "INSERT": "NEW TABLE AS new_rows"
                case "DELETE": "OLD TABLE AS old_rows"
                default: "OLD TABLE AS old_rows NEW TABLE AS new_rows"
                }
            return [
                "CREATE OR REPLACE FUNCTION \(name)() RETURNS trigger LANGUAGE plpgsql AS $sluice$ "
                    + "DECLARE delta bigint; BEGIN delta := \(trigger.change); IF delta IS DISTINCT FROM 0 THEN "
                    + "INSERT INTO \(Self.danglingChanges) (name, change) VALUES (\(pgLiteral(relation.name)), delta); "
                    + "END IF; RETURN NULL; END $sluice$",
                "CREATE TRIGGER \(name) AFTER \(trigger.event) ON \(trigger.table) REFERENCING \(transition) "
                    + "FOR EACH STATEMENT EXECUTE FUNCTION \(name)()",
            ]
        }
    }
}
