import Foundation
import SluiceStore

/// The run ledger of the memory store: a record per run, written when it
/// starts and when it ends, the newest ``StoreOptions/ledgerRuns`` kept.
extension MemoryStore {
    /// Records the run as running. A run still recorded as running was
    /// started by a store of this process that never finished it (a memory
    /// database lives only in its process): it becomes `interrupted`.
    func beginRun(inputs: [String], options: String, resumeCommand: String?) throws(StoreError) -> Int64 {
        try transaction {
            for index in state.runs.indices where state.runs[index].status == .running {
                state.runs[index].status = .interrupted
            }
            let id = (state.runs.last?.id ?? 0) + 1
            state.runs.append(
                RunRecord(
                    id: id, started: Self.now(), finished: nil, status: .running,
                    inputs: inputs.joined(separator: "\n"),
                    records: nil, counts: nil, error: nil, options: options, resumeCommand: resumeCommand))
            return id
        }
    }

    func lastRun(inputs: [String]) throws(StoreError) -> RunRecord? {
        let joined = inputs.joined(separator: "\n")
        return state.runs.last { $0.inputs == joined }
    }

    /// Records how run `id` ended, after forgetting the runs beyond
    /// ``StoreOptions/ledgerRuns`` and the checkpoints of inputs no kept
    /// run names.
    func finishRun(
        _ id: Int64, status: RunStatus, records: Int, counts: String, error message: String?
    ) throws(StoreError) {
        try transaction {
            if let newest = state.runs.last?.id {
                state.runs.removeAll { $0.id <= newest - Int64(max(options.ledgerRuns, 1)) }
            }
            let named = Set(state.runs.flatMap { $0.inputs.split(separator: "\n").map(String.init) })
            state.checkpoints = state.checkpoints.filter { named.contains($0.key) }
            guard let index = state.runs.firstIndex(where: { $0.id == id }) else { return }
            state.runs[index].finished = Self.now()
            state.runs[index].status = status
            state.runs[index].records = records
            state.runs[index].counts = counts
            state.runs[index].error = message
        }
    }

    /// Now in UTC as the ledger writes it, `YYYY-MM-DD HH:MM:SS.SSS`.
    private static func now() -> String {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "UTC")
        formatter.dateFormat = "yyyy-MM-dd HH:mm:ss.SSS"
        return formatter.string(from: Date())
    }
}
