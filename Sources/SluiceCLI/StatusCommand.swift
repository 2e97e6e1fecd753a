import ArgumentParser
import Sluice

/// `sluice status STORE`: what the store holds and how its runs went.
struct StatusCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "status",
        abstract:
            "Show a store's tables, its run ledger (running, completed, failed with the error, interrupted with the command that resumes it), its checkpoints and its record digests."
    )

    @Option(help: "How many runs to show, newest first.")
    var runs = 10

    @Flag(
        help:
            "Print the status as one JSON object (tables, runs with their state, options and counts, checkpoints), for scripts."
    )
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
        for (index, run) in status.runs.prefix(runs).enumerated() {
            let inputs = run.inputs.split(separator: "\n").joined(separator: ", ")
            print(
                "  #\(run.id) \(run.status.rawValue) started \(run.started)"
                    + (run.finished.map { ", finished \($0)" } ?? ""))
            if let unverified = run.unverified { print("     \(unverified)") }
            print("     inputs: \(inputs)")
            // How to go on, unless a later run of the same inputs did (a resume, or a run anew).
            if run.status == .interrupted || run.status == .cancelled,
                !status.runs[..<index].contains(where: { $0.inputs == run.inputs })
            {
                print("     to resume: \(run.resumeCommand ?? "run the same import command again with --resume")")
            }
            if let records = run.records { print("     records: \(records)") }
            if let error = run.error { print("     error: \(error)") }
        }
        print("checkpoints:")
        for checkpoint in status.checkpoints {
            print("  \(checkpoint.input): \(checkpoint.records) records, \(checkpoint.bytes) bytes committed")
        }
        if let digests = status.digests {
            print("record digests:")
            print(
                "  \(digests.units) records, \(digests.bytes) bytes: "
                    + (digests.valid
                        ? "the next run with the same mapping and options skips those it finds unchanged"
                        : "void, the next run parses every record"))
        }
    }
}
