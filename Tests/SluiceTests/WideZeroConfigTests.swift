import Sluice
import SluiceTestSupport
import Testing

/// Zero-config tables that grow wide (issue 17): one new member per record
/// copied every row per member (1,600 members 4.9 s, cubic), the write
/// statements' column sets aliased past 256 columns, 2,000 columns failed
/// inside SQLite, and members differing in case failed as a store error or
/// were dropped.
@Suite struct WideZeroConfigTests {
    func importing(_ lines: [String], into store: String, order: ApplyOrder) throws -> ImportReport {
        var options = ImportOptions()
        options.order = order
        return try Importer(entity: "E", key: "id", store: store, options: options)
            .runBlocking(inputs: [TestPaths.file("wide.jsonl", lines.joined(separator: "\n") + "\n")])
    }

    @Test(arguments: [ApplyOrder.key, .input]) func sparseMembersPast256ColumnsLandInTheirColumns(order: ApplyOrder)
        throws
    {
        let store = newStore()
        // Record i has members m(i) and m(i + 64): masks that differ only past column 256 stay apart.
        let lines = (0..<600).map { #"{"id": \#($0), "m\#($0)": \#($0), "m\#($0 + 64)": "s\#($0)"}"# }
        let first = try importing(lines, into: store, order: order)
        #expect(first[entity: "E"]?.inserted == 600)
        let reader = StoreReader(store)
        for id in [0, 200, 300, 450, 599] {
            #expect(
                reader.rows("SELECT m\(id), m\(id + 64) FROM E WHERE id = \(id)") == [["\(id)", "s\(id)"]], "m\(id)")
            #expect(reader.value("SELECT count(*) FROM E WHERE m\(id) IS NOT NULL") == (id < 64 ? "1" : "2"), "m\(id)")
        }
        let again = try importing(lines, into: store, order: order)
        // Found unchanged in input order; in key order not even parsed (record digests).
        let unchanged = order == .key ? again.unchangedRecords : again[entity: "E"]?.unchanged
        #expect(unchanged == 600 && again[entity: "E"]?.updated == 0)
    }

    /// A column whose first value is an object is `json`, and a later
    /// string in it is stored as JSON text (`"s"`). Read back from SQLite
    /// as a plain text column, the same file imported again stored the
    /// string without its quotes and counted its row updated; a run
    /// resumed into the table its killed start made did the same.
    @Test(arguments: [1, 2]) func aJSONColumnIsStillJSONWhenTheTableIsAdopted(threads: Int) throws {
        let store = newStore()
        var options = ImportOptions()
        options.noSkip = true
        options.threads = threads
        let input = TestPaths.file(
            "json-column.jsonl",
            #"{"id": 1, "o": {"a": 1}}"# + "\n" + #"{"id": 2, "o": "s"}"# + "\n" + #"{"id": 3, "o": 5}"# + "\n")
        for run in 0..<2 {
            let report = try Importer(entity: "E", key: "id", store: store, options: options).runBlocking(inputs: [
                input
            ])
            #expect(report[entity: "E"]?.unchanged == (run == 0 ? 0 : 3), "run \(run)")
            #expect(report[entity: "E"]?.updated == 0, "run \(run)")
            let values = StoreReader(store).rows("SELECT quote(o) FROM E ORDER BY id").map { $0.first ?? nil }
            #expect(values == [#"'{"a":1}'"#, #"'"s"'"#, "'5'"], "run \(run)")
        }
    }

    @Test func pastSQLitesColumnLimitTheMemberIsNamed() throws {
        let lines = (0..<2_100).map { #"{"id": \#($0), "m\#($0)": 1}"# }
        #expect {
            try importing(lines, into: newStore(), order: .key)
        } throws: { error in
            "\(error)".contains("attribute m1999: the member would be column 2001, past SQLite's limit of 2000 columns")
        }
    }

    @Test(arguments: [[#"{"id": 1, "a": 1}"#, #"{"id": 2, "A": 2}"#], [#"{"id": 1, "ID": 7}"#]])
    func membersDifferingOnlyInCaseAreAnInputError(lines: [String]) throws {
        #expect {
            try importing(lines, into: newStore(), order: .key)
        } throws: { error in
            guard case .parse = error as? ImportError else { return false }
            return "\(error)".contains("differ only in letter case")
        }
    }
}
