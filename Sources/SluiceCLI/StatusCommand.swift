import ArgumentParser
import Sluice

/// `sluice status STORE`: what the store holds and how its runs went.
struct StatusCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "status",
        abstract: "Show a store's tables, its run ledger (started, completed, failed with the error) and its checkpoints.")

    @Option(help: "How many runs to show, newest first.")
    var runs = 10

    @Flag(help: "Print the status as one JSON object (tables, runs with their state, options and counts, checkpoints), for scripts.")
    var json = false

    @Argument(help: "The store: a SQLite file or a PostgreSQL database (as --into takes it).")
    var store: String

    func run() throws {
        let status: StoreStatus
        do {
            status = try Status.read(store: store)
        } catch {
            throw fail(error)
        }
        if json {
            print(try Self.json(status, store: store, runs: runs))
            return
        }
        print("tables:")
        for table in status.tables { print("  \(table.name): \(table.rows) rows") }
        print("runs:")
        if status.runs.isEmpty { print("  none recorded") }
        for run in status.runs.prefix(runs) {
            let inputs = run.inputs.split(separator: "\n").joined(separator: ", ")
            print("  #\(run.id) \(run.status) started \(run.started)" + (run.finished.map { ", finished \($0)" } ?? ""))
            print("     inputs: \(inputs)")
            if let records = run.records { print("     records: \(records)") }
            if let error = run.error { print("     error: \(error)") }
        }
        print("checkpoints:")
        for checkpoint in status.checkpoints {
            print("  \(checkpoint.input): \(checkpoint.records) records, \(checkpoint.bytes) bytes committed")
        }
    }
}
