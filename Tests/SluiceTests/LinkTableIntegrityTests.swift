import Sluice
import SluiceTestSupport
import Testing

/// SQLite 3.40.1's `PRAGMA integrity_check` falsely reported "NULL value in
/// Way_nodes.Node_id" for every OSM store (issue 17): a WITHOUT ROWID link
/// table declared a NOT NULL column between two key columns. Link tables
/// now declare their key columns first.
@Suite struct LinkTableIntegrityTests {
    @Test func orderedAndChoosingLinkTablesPassIntegrityCheck() throws {
        let (_, store) = try importExample("osm", ["osm/winthrop.osm"])
        #expect(store.rows("PRAGMA integrity_check") == [["ok"]])
        #expect(
            store.rows("SELECT name FROM pragma_table_info('Way_nodes') ORDER BY cid").map { $0[0] ?? "" } == [
                "Way_id", "position", "Node_id",
            ])
    }
}
