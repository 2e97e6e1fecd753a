import Foundation
import Sluice

/// `sluice status --json`: the status as one JSON object, for scripts. The
/// members are documented in the README ("Status for scripts") and only
/// ever added to; keys are sorted so that the output of equal stores is
/// byte for byte equal.
extension StatusCommand {
    static func json(_ status: StoreStatus, store: String, runs: Int) throws -> String {
        let object: [String: Any] = [
            "store": store,
            "tables": status.tables.map { ["name": $0.name, "rows": $0.rows] },
            "runs": status.runs.prefix(runs).map(run),
            "checkpoints": status.checkpoints.map { ["input": $0.input, "records": $0.records, "bytes": $0.bytes] },
            "digests": status.digests.map { ["units": $0.units, "bytes": $0.bytes, "valid": $0.valid] } ?? NSNull(),
        ]
        let data = try JSONSerialization.data(
            withJSONObject: object, options: [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes])
        return String(decoding: data, as: UTF8.self)
    }

    /// One run: the ledger's columns, with `counts` (the run's report) and
    /// `options` as the JSON objects they were written as, and what the
    /// text output says of a run whose process died or cannot be checked.
    private static func run(_ run: RunRecord) -> [String: Any] {
        [
            "id": run.id, "status": run.status.rawValue, "started": run.started, "finished": run.finished ?? NSNull(),
            "inputs": run.inputs.split(separator: "\n").map(String.init), "records": run.records ?? NSNull(),
            "counts": object(run.counts), "options": object(run.options), "error": run.error ?? NSNull(),
            "swept": run.swept,
            "resumeCommand": run.resumeCommand ?? NSNull(), "unverified": run.unverified ?? NSNull(),
        ]
    }

    /// The JSON object `text` holds; null when there is none, the text itself
    /// when it is not JSON.
    private static func object(_ text: String?) -> Any {
        guard let text else { return NSNull() }
        return (try? JSONSerialization.jsonObject(with: Data(text.utf8))) ?? text
    }
}
