import Foundation
import Sluice
import SluiceTestSupport
import Testing

/// The store conformance harness: the same runs against a SQLite store, a
/// PostgreSQL database and a memory store (``MemoryStore``, which lives in
/// the tests), after each run the same report (counts per entity, per
/// table, dangling links, warnings) and the same rows in every table as
/// the SQLite store's.
struct ConformanceRun: Sendable {
    /// `mapping:` YAML, or nil for a zero-config run keyed by `key`.
    var yaml: String?
    var key: String = "id"
    /// Input files, as paths.
    var inputs: [String]
    var options = ImportOptions()
}

/// A sequence of runs into one store of each kind.
struct ConformanceCase: Sendable, CustomTestStringConvertible {
    var name: String
    var runs: [ConformanceRun]
    var testDescription: String { name }
}

enum StoreConformance {
    /// Runs `test`'s runs into a new SQLite store, a new PostgreSQL database
    /// and a new memory store, and expects the SQLite store's outcome from
    /// the other two after each.
    static func check(_ test: ConformanceCase) throws {
        let server = try PostgresTestServer.require()
        let directory = TestPaths.temporaryDirectory()
        let sqlite = directory.appendingPathComponent("conformance.sqlite").path
        let postgres = try server.newDatabase()
        // Named by a path, so that the key-ordered apply's sorted runs go beside it.
        let memory = MemoryDatabase(name: directory.appendingPathComponent("conformance.memory").path)
        let json = SortedJSON()
        for (index, run) in test.runs.enumerated() {
            let step = "\(test.name), run \(index + 1)"
            let expected = try outcome(run, store: sqlite)
            let tables = try dump(sqlite: sqlite, json)
            let postgresOutcome = try outcome(run, store: postgres)
            compare(expected, tables, with: postgresOutcome, try dump(postgres: postgres, json), "PostgreSQL", step)
            let memoryOutcome = try outcome(run, store: memory.name, openStore: memory.opener)
            compare(expected, tables, with: memoryOutcome, dump(memory: memory, json), "the memory store", step)
        }
    }

    /// Expects `actual` and `actualTables` of the store called `store` to be
    /// the SQLite store's `expected` and `expectedTables`.
    static func compare(
        _ expected: Result<ImportReport, ImportError>, _ expectedTables: [String: [[String]]],
        with actual: Result<ImportReport, ImportError>, _ actualTables: [String: [[String]]], _ store: String,
        _ step: String
    ) {
        let step = "\(step), \(store)"
        switch (expected, actual) {
        case (.success(let left), .success(let right)):
            #expect(left.entities.map(\.name) == right.entities.map(\.name), "\(step)")
            for (entity, other) in zip(left.entities, right.entities) {
                #expect(entity.counts == other.counts, "\(step): \(entity.name)")
            }
            #expect(left.tables == right.tables, "\(step)")
            #expect(left.dangling == right.dangling, "\(step)")
            #expect(left.records == right.records, "\(step)")
            #expect(left.warnings == right.warnings, "\(step)")
        case (.failure(let left), .failure(let right)):
            #expect(kind(left) == kind(right), "\(step): \(left) / \(right)")
        default:
            Issue.record("\(step): SQLite \(expected), \(store) \(actual)")
        }
        #expect(expectedTables.keys.sorted() == actualTables.keys.sorted(), "\(step)")
        for (table, rows) in expectedTables.sorted(by: { $0.key < $1.key }) {
            let other = actualTables[table] ?? []
            #expect(rows.count == other.count, "\(step): rows of \(table)")
            if rows != other {
                let missing = rows.filter { !other.contains($0) }.prefix(3)
                let extra = other.filter { !rows.contains($0) }.prefix(3)
                Issue.record(
                    "\(step): \(table) differs; SQLite only: \(Array(missing)); \(store) only: \(Array(extra))")
            }
        }
    }

    /// Runs `run` into the store `store` names, or into the one `openStore`
    /// opens (then `store` only names it).
    static func outcome(
        _ run: ConformanceRun, store: String, openStore: Importer.StoreOpener? = nil
    ) throws -> Result<ImportReport, ImportError> {
        var importer =
            try run.yaml.map {
                try Importer(mapping: Mapping.parse(yaml: $0), store: store, options: run.options)
            }
            ?? Importer(entity: "E", key: run.key, store: store, options: run.options)
        importer.openStore = openStore
        do {
            return .success(try importer.runBlocking(inputs: run.inputs))
        } catch {
            return .failure(error)
        }
    }

    /// The kind of an import error, without the store's own words.
    static func kind(_ error: ImportError) -> String {
        "\(error)".split(separator: ":").first.map(String.init) ?? ""
    }

    /// Every user table of a SQLite store: its rows, normalised, sorted.
    static func dump(sqlite path: String, _ json: SortedJSON) throws -> [String: [[String]]] {
        let reader = StoreReader(path)
        var tables: [String: [[String]]] = [:]
        let names = reader.rows(
            "SELECT name FROM sqlite_schema WHERE type = 'table' AND name NOT LIKE '\\_sluice\\_%' ESCAPE '\\' AND name NOT LIKE 'sqlite\\_%' ESCAPE '\\'"
        )
        for case let name? in names.map({ $0[0] }) {
            let columns = reader.rows("SELECT name, type FROM pragma_table_info('\(name)') ORDER BY cid")
            let selected = columns.map { column -> String in
                let quoted = "\"\(column[0] ?? "")\""
                return column[1] == "BLOB"
                    ? "CASE WHEN \(quoted) IS NULL THEN NULL ELSE lower(hex(\(quoted))) END" : quoted
            }
            let rows = reader.rows("SELECT \(selected.joined(separator: ", ")) FROM \"\(name)\"")
            tables[name] = normalised(
                rows, types: columns.map { $0[1] ?? "" }, names: columns.map { $0[0] ?? "" }, json)
        }
        return tables
    }

    /// Every user table of a PostgreSQL database: its rows, normalised, sorted.
    static func dump(postgres conninfo: String, _ json: SortedJSON) throws -> [String: [[String]]] {
        let reader = PostgresReader(conninfo)
        var tables: [String: [[String]]] = [:]
        let names = reader.rows(
            "SELECT relname FROM pg_class WHERE relnamespace = current_schema()::regnamespace AND relkind = 'r' AND relname NOT LIKE '\\_sluice\\_%'"
        )
        for case let name? in names.map({ $0[0] }) {
            let columns = reader.rows(
                "SELECT column_name, data_type FROM information_schema.columns WHERE table_schema = current_schema() AND table_name = '\(name)' ORDER BY ordinal_position"
            )
            let selected = columns.map { column -> String in
                let quoted = "\"\(column[0] ?? "")\""
                switch column[1] {
                case "bytea": return "encode(\(quoted), 'hex')"
                case "timestamp with time zone":
                    return "to_char(\(quoted) AT TIME ZONE 'UTC', 'YYYY-MM-DD HH24:MI:SS.US')"
                case "boolean": return "\(quoted)::int"
                default: return quoted
                }
            }
            let rows = reader.rows("SELECT \(selected.joined(separator: ", ")) FROM \"\(name)\"")
            tables[name] = normalised(
                rows, types: columns.map { $0[1] ?? "" }, names: columns.map { $0[0] ?? "" }, json)
        }
        return tables
    }

    /// Every table of a memory store: its rows, normalised, sorted.
    static func dump(memory: MemoryDatabase, _ json: SortedJSON) -> [String: [[String]]] {
        memory.dump().mapValues { normalised($0.rows, types: $0.types, names: $0.names, json) }
    }

    /// Values written the same way whichever store read them: numbers as
    /// Swift prints them, times without trailing zeros, JSON with sorted
    /// keys, created keys without their run's random token; rows sorted. Columns are named in each row, so that a column
    /// order that differs does not count.
    static func normalised(_ rows: [[String?]], types: [String], names: [String], _ json: SortedJSON) -> [[String]] {
        let order = names.indices.sorted { names[$0] < names[$1] }
        let doubles = types.map { $0 == "REAL" || $0 == "double precision" }
        return rows.map { row in
            order.map { index in
                guard let value = row[index] else { return names[index] + "=NULL" }
                return names[index] + "=" + normalised(value, double: doubles[index], json)
            }
        }.sorted { $0.lexicographicallyPrecedes($1) }
    }

    /// One value, normalised. Each rule below needs a `-`, a `:` or a
    /// leading `{` or `[`, so a value without them (most numbers and
    /// names) is returned after two `memchr`s and a look at its first
    /// character: the rules' string operations, run on every value of every
    /// dump in a debug build, took most of the conformance cases' time
    /// (perf: 29% of the `examples` cases' samples in this function, 12% in
    /// `split`). No value is both a time (a `-` fifth) and a created key
    /// (letters and digits before its first `:`, digits after), so their
    /// order does not matter: times, the commoner, come first.
    private static func normalised(_ value: String, double: Bool, _ json: SortedJSON) -> String {
        if double, let number = Double(value) { return number.description }
        if holds(value, "-"), let time = time(value) { return time }
        if holds(value, ":"), let key = createdKey(value) { return key }
        if value.first == "{" || value.first == "[" {
            if let sorted = json.sorted(value) { return sorted }
        }
        return value
    }

    /// Whether `value`'s UTF-8 holds the ASCII `byte` (a `Character` equal
    /// to an ASCII one is that byte alone, so without the byte no
    /// `Character` matches it).
    private static func holds(_ value: String, _ byte: Unicode.Scalar) -> Bool {
        var value = value
        return value.withUTF8 { bytes in
            bytes.baseAddress.map { memchr($0, Int32(byte.value), bytes.count) != nil } ?? false
        }
    }

    /// The key a `keyless: create` row gets starts with a token random
    /// per run (`token:record:entity`): the key without it, else nil.
    private static func createdKey(_ value: String) -> String? {
        // Its token is at most 13 characters: a text whose first 14 hold no
        // `:` is not one, and is not split.
        guard value.prefix(14).contains(":") else { return nil }
        let parts = value.split(separator: ":", omittingEmptySubsequences: false)
        guard parts.count == 3, (1...13).contains(parts[0].count),
            parts[0].allSatisfy({ $0.isLowercase || $0.isNumber }),
            parts.dropFirst().allSatisfy({ !$0.isEmpty && $0.allSatisfy(\.isNumber) })
        else { return nil }
        return "*:\(parts[1]):\(parts[2])"
    }

    /// A date or time as `YYYY-MM-DD HH:MM:SS[.fraction]` without trailing
    /// zeros, else nil.
    private static func time(_ value: String) -> String? {
        // The length (which counts every character of a long text) is
        // checked last.
        if value.first?.isNumber == true, value.dropFirst(4).first == "-", value.dropFirst(7).first == "-",
            value.count >= 10, value.count <= 32
        {
            var text = value.replacingOccurrences(of: "T", with: " ")
            if text.count == 10 { text += " 00:00:00" }
            if text.contains(".") {
                while text.last == "0" { text.removeLast() }
                if text.last == "." { text.removeLast() }
            }
            return text
        }
        return nil
    }
}

/// JSON texts with their keys sorted, each text sorted once for a whole
/// case: its runs' dumps of the three stores meet the same texts again (a
/// SQLite and a memory store keep the same text, a second run the same
/// rows), and sorting them took a quarter of the `examples` cases' samples
/// (perf, `JSONSerialization.data`) once the other rules were cheap.
final class SortedJSON {
    private var sorted: [String: String?] = [:]

    /// `text` with its objects' keys sorted, or nil when it is not JSON.
    func sorted(_ text: String) -> String? {
        if let known = sorted[text] { return known }
        var result: String?
        if let object = try? JSONSerialization.jsonObject(with: Data(text.utf8), options: [.fragmentsAllowed]),
            let data = try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys, .fragmentsAllowed])
        {
            result = String(decoding: data, as: UTF8.self)
        }
        sorted[text] = result
        return result
    }
}
