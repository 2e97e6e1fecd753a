import SluiceBatching
@_spi(Machinery) import SluiceRecords
import SluiceTestSupport
import Testing

@testable import SluiceStore

/// A table "T" with an integer key and two columns.
let schema = TableSchema(
    name: "T",
    columns: [
        ColumnSchema(name: "id", type: .integer), ColumnSchema(name: "name", type: .string),
        ColumnSchema(name: "n", type: .integer, defaultValue: .integer(7)),
    ],
    keyColumns: [0])

/// A group with rows of (id, name?, n?) where nil means absent.
func group(_ rows: [(Int64, String?, Int64?)], schema: TableSchema = schema) -> BatchGroup {
    var arena = RowArena(columnCount: 3)
    for (ordinal, row) in rows.enumerated() {
        arena.beginRow(ordinal: ordinal + 1)
        arena.set(0, .integer(row.0))
        if let name = row.1 { arena.set(1, arena.text(Array(name.utf8))) }
        if let n = row.2 { arena.set(2, .integer(n)) }
    }
    return BatchGroup(
        batches: [Batch(entity: 0, schema: schema, rows: arena)],
        checkpoint: Checkpoint(input: "in", records: rows.count, bytes: 0), rawBytes: 0, records: rows.count)
}

func counts(inserted: Int = 0, updated: Int = 0, unchanged: Int = 0) -> EntityCounts {
    var counts = EntityCounts()
    counts.inserted = inserted
    counts.updated = updated
    counts.unchanged = unchanged
    return counts
}

/// The error `body` throws, nil when it throws none.
func failure(_ body: () throws(StoreError) -> Void) -> StoreError? {
    do {
        try body()
        return nil
    } catch {
        return error
    }
}
