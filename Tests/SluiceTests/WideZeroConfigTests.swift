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
