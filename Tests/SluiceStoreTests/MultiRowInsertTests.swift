import SluiceBatching
@_spi(Machinery) import SluiceRecords
import SluiceTestSupport
import Testing

@testable import SluiceStore

/// New rows go into a SQLite table 32 at a time, one multi-row INSERT per
/// run of rows that set the same columns: the rows, their order, their
/// defaults and the counts are those of one statement a row.
@Suite struct MultiRowInsertTests {
    let path = TestPaths.temporaryDirectory().appendingPathComponent("m.sqlite").path

    @Test func thirtyTwoRowsAStatementWithDefaultsAndUpdatesBetween() throws {
        let store = try SQLiteStore(path: path)
        try store.prepare([schema])
        // 100 new rows; rows 40 to 49 leave `n` absent (its default, 7), so
        // the run of inserts is cut there: 32 and 7 alone, 10 alone, 32 and 19 alone.
        let first = (1...100).map { id -> (Int64, String?, Int64?) in
            (Int64(id), "r\(id)", (40...49).contains(id) ? nil : Int64(id))
        }
        #expect(try store.apply(group(first))[0] == counts(inserted: 100))
        let statements = store.tables["T"]?.writes.keys.map { "\($0.insert ? "insert" : "update") \($0.rows)" } ?? []
        #expect(statements.sorted() == ["insert 1", "insert 1", "insert 32"])
        // New keys between changed and unchanged ones: every update cuts the
        // run of inserts before it.
        let second = (1...200).map { id -> (Int64, String?, Int64?) in
            let name = id <= 100 && id % 3 == 0 ? "changed\(id)" : "r\(id)"
            return (Int64(id), name, (40...49).contains(id) ? nil : Int64(id))
        }
        #expect(try store.apply(group(second))[0] == counts(inserted: 100, updated: 33, unchanged: 67))
        let reader = StoreReader(path)
        #expect(reader.count("T") == 200)
        let expected = (1...200).map { id in
            [
                "\(id)", id <= 100 && id % 3 == 0 ? "changed\(id)" : "r\(id)",
                (40...49).contains(id) ? "7" : "\(id)",
            ]
        }
        #expect(reader.rows("SELECT id, name, n FROM T ORDER BY rowid") == expected)
    }

    @Test func rowsPerStatementKeepParametersWithinSQLitesLimit() {
        #expect(SQLiteStore.insertRows(columns: 3) == 32)
        #expect(SQLiteStore.insertRows(columns: 1_000) == 32)
        #expect(SQLiteStore.insertRows(columns: 1_001) == 31)
        #expect(SQLiteStore.insertRows(columns: 40_000) == 1)
    }
}
