import Foundation
import Sluice
import SluiceTestSupport
import Testing

/// A child entity in `update-only` mode skips new keys; before the fix the
/// parent's links to the skipped children were written anyway and counted
/// dangling.
@Suite struct SkippedChildLinkTests {
    func yaml(missing: String) -> String {
        """
        entities:
          P:
            records: $
            key: id
            attributes: {id: integer}
            relationships:
              kids: {entity: K, source: "kids[*]", many: true\(missing)}
          K:
            key: id
            mode: update-only
            attributes: {id: integer, name: string}
        """
    }

    @Test(arguments: [ApplyOrder.key, .input]) func linksGoOnlyToStoredChildrenUnlessTheMappingSaysOtherwise(
        order: ApplyOrder
    ) throws {
        var options = ImportOptions()
        options.order = order
        let seed = "entities: {K: {records: $, key: id, attributes: {id: integer, name: string}}}"
        let input = #"{"id": 1, "kids": [{"id": 10, "name": "a"}, {"id": 11, "name": "b"}]}"#
        for (missing, expected) in [("", [["1", "10"]]), (", missing: dangling", [["1", "10"], ["1", "11"]])] {
            let store = newStore()
            try sync(seed, #"{"id": 10, "name": "old"}"#, store: store, options: options)
            let report = try sync(yaml(missing: missing), input, store: store, options: options)
            #expect(report[entity: "K"]?.updated == 1 && report[entity: "K"]?.skipped == 1)
            let reader = StoreReader(store)
            #expect(reader.rows("SELECT P_id, K_id FROM P_kids ORDER BY 2") == expected, "missing: \(missing)")
            #expect(report.dangling["P_kids"] == (missing.isEmpty ? nil : 1), "missing: \(missing)")
            #expect(reader.rows("SELECT id, name FROM K") == [["10", "a"]])
        }
    }
}
