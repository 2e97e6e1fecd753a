import SluiceRecords

/// Dangling counts kept up to date instead of counted again at every run's
/// end: table `_sluice_dangling` holds each relationship's count, and
/// triggers on the referring, link and target tables change it in the
/// transaction of every write that changes it (a merge, a deletion by key,
/// a stub, a link, a sweep, a rolled-back dry run or a killed batch alike).
/// A write whose effect a trigger cannot count from an index probe — a
/// target row inserted while references are dangling, or deleted, for an
/// entity reference (no index on the referring column) — sets the count to
/// NULL, unknown: the run's end counts it again (``RowStore/danglingReferences(_:_:counted:)``)
/// and keeps it from there.
extension SQLiteStore {
    /// The table of kept counts: `name` (``DanglingRelation/name``), `count`
    /// (NULL: unknown).
    static let danglingTable = "_sluice_dangling"

    /// The counts this store keeps of those of `relations` whose triggers
    /// are exactly the ones ``danglingTriggers(_:)`` makes now (a relation
    /// whose target, column or link target changed is counted again), and
    /// whose count is known. Two reads of the schema and the table.
    package func storedDanglingCounts(_ relations: [DanglingRelation]) throws(StoreError) -> [String: Int] {
        let action = "reading the kept dangling counts"
        guard try keepsDanglingCounts(action) else { return [:] }
        let triggers = try storedDanglingTriggers(action)
        let statement = try SQLiteStatement(
            connection, "SELECT name, count FROM \(Self.danglingTable) WHERE count IS NOT NULL", action)
        var stored: [String: Int] = [:]
        while try statement.step(action) { stored[statement.text(0)] = Int(statement.int64(1)) }
        var kept: [String: Int] = [:]
        for relation in relations {
            guard let count = stored[relation.name] else { continue }
            let wanted = danglingTriggers(relation)
            let present = triggers.filter { Self.isDanglingTrigger($0.key, of: relation.name) }
            guard present.count == wanted.count, wanted.allSatisfy({ present[$0.name] == $0.sql }) else { continue }
            kept[relation.name] = count
        }
        return kept
    }

    /// Records `counts` and (re)makes each relationship's triggers, in one
    /// transaction, so that the counts follow every later write. O(relations).
    package func keepDanglingCounts(_ counts: [(relation: DanglingRelation, count: Int)]) throws(StoreError) {
        let action = "keeping the dangling counts"
        try connection.begin(action)
        do throws(StoreError) {
            try connection.execute(
                "CREATE TABLE IF NOT EXISTS \(Self.danglingTable) "
                    + "(name TEXT PRIMARY KEY, count INTEGER, tables TEXT NOT NULL)", action)
            let triggers = try storedDanglingTriggers(action)
            for (relation, count) in counts {
                for name in triggers.keys where Self.isDanglingTrigger(name, of: relation.name) {
                    try connection.execute("DROP TRIGGER \(quoted(name))", action)
                }
                let tables = literal(Self.danglingTables(relation).joined(separator: "\n"))
                try connection.execute(
                    "INSERT INTO \(Self.danglingTable) (name, count, tables) "
                        + "VALUES (\(literal(relation.name)), \(count), \(tables)) "
                        + "ON CONFLICT(name) DO UPDATE SET count = excluded.count, tables = excluded.tables", action)
                for trigger in danglingTriggers(relation) { try connection.execute(trigger.sql, action) }
            }
            try connection.commit(action)
        } catch {
            connection.rollback()
            throw error
        }
    }

    /// Stops keeping every count (its triggers dropped, the counts
    /// forgotten), in the caller's transaction: before a table is rebuilt,
    /// whose rows are copied without firing triggers.
    func forgetDanglingCounts() throws(StoreError) {
        let action = "forgetting the dangling counts"
        for name in try storedDanglingTriggers(action).keys {
            try connection.execute("DROP TRIGGER \(quoted(name))", action)
        }
        try connection.execute("DROP TABLE IF EXISTS \(Self.danglingTable)", action)
    }

    /// Stops keeping link table `link`'s count, in the caller's
    /// transaction: before a bulk load drops its target index, which the
    /// target tables' triggers probe.
    func forgetDanglingCount(of link: LinkSchema) throws(StoreError) {
        let action = "forgetting the dangling count of \(quoted(link.name))"
        for name in try storedDanglingTriggers(action).keys where Self.isDanglingTrigger(name, of: link.name) {
            try connection.execute("DROP TRIGGER \(quoted(name))", action)
        }
    }

    /// Drops the triggers (and forgets the counts) of the kept counts that
    /// read a table the store no longer has (dropped by hand, its entity
    /// gone from the mapping), in the schema transaction: they would fail
    /// every write to the tables they are on. O(kept counts).
    func forgetDanglingCountsOfMissingTables() throws(StoreError) {
        let action = "checking the kept dangling counts"
        guard try keepsDanglingCounts(action) else { return }
        let stored = Set(
            try connection.strings("SELECT lower(name) FROM sqlite_schema WHERE type = 'table'", column: 0, action))
        let statement = try SQLiteStatement(connection, "SELECT name, tables FROM \(Self.danglingTable)", action)
        var gone: [String] = []
        while try statement.step(action) {
            let tables = statement.text(1).split(separator: "\n").map { $0.lowercased() }
            if tables.contains(where: { !stored.contains($0) }) { gone.append(statement.text(0)) }
        }
        guard !gone.isEmpty else { return }
        let triggers = try storedDanglingTriggers(action)
        for relation in gone {
            for name in triggers.keys where Self.isDanglingTrigger(name, of: relation) {
                try connection.execute("DROP TRIGGER \(quoted(name))", action)
            }
            try connection.execute("DELETE FROM \(Self.danglingTable) WHERE name = \(literal(relation))", action)
        }
    }

    /// Whether the store has the table of kept counts.
    private func keepsDanglingCounts(_ action: String) throws(StoreError) -> Bool {
        let exists = try connection.strings(
            "SELECT count(*) FROM sqlite_schema WHERE type = 'table' AND name = \(literal(Self.danglingTable))",
            column: 0, action)
        return exists.first == "1"
    }

    /// The tables `relation`'s triggers are on or read.
    private static func danglingTables(_ relation: DanglingRelation) -> [String] {
        switch relation {
        case .reference(let schema, let reference): return [schema.name, reference.targetTable]
        case .link(let link): return [link.name] + link.targets.map(\.table)
        }
    }

    /// The triggers this file made, by name, with their SQL as stored.
    private func storedDanglingTriggers(_ action: String) throws(StoreError) -> [String: String] {
        let statement = try SQLiteStatement(
            connection,
            "SELECT name, sql FROM sqlite_schema WHERE type = 'trigger' AND name LIKE '\\_sluice\\_dangling %' ESCAPE '\\'",
            action)
        var triggers: [String: String] = [:]
        while try statement.step(action) { triggers[statement.text(0)] = statement.text(1) }
        return triggers
    }

    /// Whether trigger `name` is one of relationship `relation`'s: the
    /// relationship's prefix followed by digits only.
    private static func isDanglingTrigger(_ name: String, of relation: String) -> Bool {
        let prefix = "_sluice_dangling \(relation) #"
        guard name.hasPrefix(prefix) else { return false }
        let number = name.dropFirst(prefix.count)
        return !number.isEmpty && number.allSatisfy(\.isNumber)
    }

    /// The triggers that keep `relation`'s count, named and in order. A
    /// reference (column c of S, to key K of T): a row of S inserted, deleted
    /// (before, while its own key still stands) or updated to another c
    /// adds or takes away 1 when its target is missing; a row of T inserted
    /// while the count is above 0, or deleted, makes the count unknown. A
    /// link (per target): a link inserted or deleted to a missing target
    /// adds or takes away 1; a target row inserted or deleted takes away or
    /// adds the links naming it (one probe of the link table's target
    /// index); a link updated makes the count unknown.
    func danglingTriggers(_ relation: DanglingRelation) -> [(name: String, sql: String)] {
        let name = literal(relation.name)
        let set = "UPDATE \(Self.danglingTable) SET count ="
        var bodies: [String] = []
        switch relation {
        case .reference(let schema, let reference):
            let (table, column) = (quoted(schema.name), quoted(schema.columns[reference.column].name))
            let target = quoted(reference.targetTable)
            func missing(_ row: String) -> String {
                "(\(row).\(column) IS NOT NULL AND NOT EXISTS "
                    + "(SELECT 1 FROM \(target) WHERE \(quoted(reference.targetKey)) = \(row).\(column)))"
            }
            bodies = [
                "AFTER INSERT ON \(table) WHEN \(missing("NEW")) BEGIN \(set) count + 1 WHERE name = \(name); END",
                "BEFORE DELETE ON \(table) WHEN \(missing("OLD")) BEGIN \(set) count - 1 WHERE name = \(name); END",
                "AFTER UPDATE OF \(column) ON \(table) WHEN OLD.\(column) IS NOT NEW.\(column) BEGIN "
                    + "\(set) count + \(missing("NEW")) - \(missing("OLD")) WHERE name = \(name); END",
                "AFTER INSERT ON \(target) BEGIN \(set) NULL WHERE name = \(name) AND count > 0; END",
                "AFTER DELETE ON \(target) BEGIN \(set) NULL WHERE name = \(name); END",
            ]
        case .link(let link):
            let (table, column) = (quoted(link.name), quoted(link.targetColumn.name))
            bodies = ["AFTER UPDATE ON \(table) BEGIN \(set) NULL WHERE name = \(name); END"]
            for target in link.targets {
                let (targetTable, key) = (quoted(target.table), quoted(target.key))
                let entity = quoted(LinkSchema.entityColumnName)
                /// The condition that a link row (`row` is `NEW.`, `OLD.` or
                /// empty) names this target, when the link has choices.
                func names(_ row: String) -> String {
                    target.value.isEmpty ? "" : "\(row)\(entity) = \(literal(target.value)) AND "
                }
                func missing(_ row: String) -> String {
                    "\(names(row))NOT EXISTS (SELECT 1 FROM \(targetTable) WHERE \(key) = \(row)\(column))"
                }
                func links(_ row: String) -> String {
                    "(SELECT count(*) FROM \(table) WHERE \(names(""))\(column) = \(row)\(key))"
                }
                bodies += [
                    "AFTER INSERT ON \(table) WHEN \(missing("NEW.")) BEGIN \(set) count + 1 WHERE name = \(name); END",
                    "AFTER DELETE ON \(table) WHEN \(missing("OLD.")) BEGIN \(set) count - 1 WHERE name = \(name); END",
                    "AFTER INSERT ON \(targetTable) BEGIN \(set) count - \(links("NEW.")) "
                        + "WHERE name = \(name) AND count > 0; END",
                    "AFTER DELETE ON \(targetTable) BEGIN \(set) count + \(links("OLD.")) "
                        + "WHERE name = \(name) AND count IS NOT NULL; END",
                ]
            }
        }
        return bodies.enumerated().map { index, body in
            let trigger = "_sluice_dangling \(relation.name) #\(index)"
            return (trigger, "CREATE TRIGGER \(quoted(trigger)) \(body)")
        }
    }
}
