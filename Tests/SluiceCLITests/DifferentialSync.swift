import Foundation
import SluiceTestSupport

/// The differential test of record digests (issue 27): a ``SyncSequence``
/// run by the `sluice` binary on two stores, one with every import's default
/// (skipping the records whose digests it holds) and one with every import
/// a full run; after each step the project's tables of both (not the
/// `_sluice_*` bookkeeping) must hold the same rows, every column.
enum DifferentialSync {
    /// What the full-run side adds to every import: parse every record, keep
    /// no digests.
    static let fullRunArguments = ["--no-skip"]

    /// The binary both sides run: `SLUICE_DIFFERENTIAL_BINARY` (the release
    /// build, for Benchmarks/differential.py), else the one built with the tests.
    static let binary = ProcessInfo.processInfo.environment["SLUICE_DIFFERENTIAL_BINARY"] ?? sluice

    /// One side: the store (`--into`) and what every import adds.
    struct Side {
        var name: String
        var into: String
        var arguments: [String]
        /// How long the side's last completed run took: a stopped run is
        /// stopped at a fraction of it.
        var lastDuration = 0.05
        /// Waits, after a run was stopped, until the store has noticed
        /// (a PostgreSQL server ends a killed client's session on its own time).
        var settle: () -> Void = {}
        /// The exit status and message of the side's last run that failed as
        /// it must (a damaged dump).
        var lastFailure = ""
        /// Given the summary (standard output) of each run that succeeded.
        var summarized: (String) -> Void = { _ in }
        /// What the side's change files add: the full side of a SQLite
        /// sequence applies them in input order, whose batches delete a
        /// deleted event's links with its row, against the key order's
        /// link batches (`SQLiteStore+DeferredUnlinks`).
        var changeFileArguments: [String] = []
        /// Whether the side's runs of a dump (first imports, skipping runs,
        /// kills and their resumes, mapping changes) read its records from
        /// standard input, one stream of both files; a change file and a
        /// damaged dump are read from their files.
        var standardInput = false
        /// The runs the side's store has recorded, when a stopped run must
        /// be recorded before it is stopped: a stream's `--resume` resumes
        /// the last run of `-`, which for a run stopped before it recorded
        /// itself is an earlier run of another stream.
        var runsRecorded: (() -> Int)?

        /// What a run of `dump` names as its inputs, and the bytes it is
        /// piped: the files, or `-` and the joined file's bytes.
        func inputs(_ dump: SyncSequence.Dump) -> (arguments: [String], piped: Data?) {
            guard standardInput else { return (dump.files, nil) }
            let format = URL(fileURLWithPath: dump.joined).pathExtension
            return (["--format", format, "-"], FileManager.default.contents(atPath: dump.joined))
        }
    }

    /// A table as a store holds it: its columns with their types and its
    /// rows sorted by every column, each value as its store writes it.
    struct Table: Equatable {
        var name: String
        var columns: [String]
        var rows: [[String?]]
    }

    /// Runs `sequence` on `skipping` and `full`, comparing their stores'
    /// `contents` after every step; returns nil when they always agree,
    /// else the seed, the steps and the first difference (or the run that
    /// failed). `before` is given each step before its runs.
    static func run(
        _ sequence: SyncSequence, skipping: Side, full: Side, contents: (String) -> [Table],
        before: (SyncSequence.PlannedStep) -> Void = { _ in }
    ) throws -> String? {
        var sides = [skipping, full]
        for (index, planned) in sequence.steps.enumerated() {
            before(planned)
            for side in sides.indices {
                if let failure = try perform(planned, on: &sides[side]) {
                    return report(sequence, failedAt: index, "\(sides[side].name): \(failure)")
                }
            }
            if case .damaged = planned.step, sides[0].lastFailure != sides[1].lastFailure {
                return report(
                    sequence, failedAt: index,
                    "the runs failed differently: skipping \(sides[0].lastFailure), full \(sides[1].lastFailure)")
            }
            if let difference = firstDifference(contents(skipping.into), contents(full.into)) {
                return report(sequence, failedAt: index, difference)
            }
        }
        return nil
    }

    /// Runs one step's imports on `side`; returns why a run that must
    /// succeed did not.
    static func perform(_ planned: SyncSequence.PlannedStep, on side: inout Side) throws -> String? {
        let base = ["import", "--mapping", planned.mapping, "--into", side.into] + side.arguments
        func sweep(_ on: Bool) -> [String] {
            on ? ["--delete-missing"] + (planned.allowEmptyDelete ? ["--allow-empty-delete"] : []) : []
        }
        switch planned.step {
        case .dump(let dump, let deleteMissing, let orderInput, let standardInput):
            let order = orderInput ? ["--order", "input"] : []
            if standardInput {
                let format = URL(fileURLWithPath: dump.joined).pathExtension
                return try succeeds(
                    base + sweep(deleteMissing) + order + ["--format", format, "-"],
                    input: FileManager.default.contents(atPath: dump.joined), &side)
            }
            let inputs = side.inputs(dump)
            return try succeeds(base + sweep(deleteMissing) + order + inputs.arguments, input: inputs.piped, &side)
        case .changeFile(let path):
            return try succeeds(base + side.changeFileArguments + [path], &side)
        case .mappingChange(_, let dump, let deleteMissing):
            let inputs = side.inputs(dump)
            return try succeeds(base + sweep(deleteMissing) + inputs.arguments, input: inputs.piped, &side)
        case .damaged(let dump, _, let deleteMissing):
            let arguments = base + sweep(deleteMissing) + dump.files
            let result = try runCommand(binary, arguments)
            guard result.status != 0 else {
                return "`sluice \(arguments.joined(separator: " "))` accepted a damaged dump"
            }
            side.lastFailure = "exit \(result.status): \(result.stderr)"
            return nil
        case .stopped(let dump, let signal, let fraction, let resume, let deleteMissing):
            let inputs = side.inputs(dump)
            let arguments = base + sweep(deleteMissing) + inputs.arguments
            let process = Process()
            process.executableURL = URL(fileURLWithPath: binary)
            process.arguments = arguments
            process.standardOutput = FileHandle.nullDevice
            process.standardError = FileHandle.nullDevice
            let pipe = Pipe()
            process.standardInput = pipe
            // Counted before the run starts, while nothing writes the store;
            // no ledger yet counts as none. A count that cannot be read while
            // the run writes (-1: the reader sets no busy timeout) is not a
            // new run: taken for one, the run was stopped before it recorded
            // itself and its `--resume` resumed the run before it (1 in 12
            // local runs of a standard-input group, once in CI).
            let recorded = max(0, side.runsRecorded?() ?? 0)
            try process.run()
            let writer = Thread { writeQuietly(inputs.piped ?? Data(), to: pipe) }
            writer.start()
            usleep(useconds_t(side.lastDuration * fraction * 1_000_000))
            if let runsRecorded = side.runsRecorded {
                func unrecorded() -> Bool {
                    let now = runsRecorded()
                    return now < 0 || now == recorded
                }
                while process.isRunning && unrecorded() { usleep(1_000) }
            }
            kill(process.processIdentifier, signal)
            process.waitUntilExit()
            side.settle()
            return try succeeds(arguments + (resume ? ["--resume"] : []), input: inputs.piped, &side)
        }
    }

    /// Runs `arguments`; nil when it exits 0, else its exit status and
    /// standard error.
    private static func succeeds(_ arguments: [String], input: Data? = nil, _ side: inout Side) throws -> String? {
        let started = Date()
        let result = try runCommand(binary, arguments, input: input)
        side.lastDuration = Date().timeIntervalSince(started)
        guard result.status == 0 else {
            return "`sluice \(arguments.joined(separator: " "))` exited \(result.status): \(result.stderr)"
        }
        side.summarized(result.stdout)
        return nil
    }

    /// The records a run's summary says it left unparsed, unchanged since
    /// the run before (0 when it says nothing of them).
    static func unchangedRecords(_ summary: String) -> Int {
        let marker = " of them unchanged since the last run"
        guard let line = summary.split(separator: "\n").first(where: { $0.contains(marker) }) else { return 0 }
        return Int(String(line.prefix { $0 != " " }.filter(\.isNumber))) ?? 0
    }

    /// The first difference between two stores' tables, said in words.
    static func firstDifference(_ skipping: [Table], _ full: [Table]) -> String? {
        let names = (skipping.map(\.name), full.map(\.name))
        guard names.0 == names.1 else { return "the tables differ: \(names.0) skipping, \(names.1) full" }
        for (left, right) in zip(skipping, full) where left != right {
            guard left.columns == right.columns else {
                return "table \(left.name): columns \(left.columns) skipping, \(right.columns) full"
            }
            for row in 0..<max(left.rows.count, right.rows.count) {
                let mine = row < left.rows.count ? left.rows[row] : nil
                let theirs = row < right.rows.count ? right.rows[row] : nil
                guard mine != theirs else { continue }
                return "table \(left.name) (\(left.rows.count) rows skipping, \(right.rows.count) full), "
                    + "sorted row \(row + 1): skipping \(text(mine)), full \(text(theirs))"
            }
        }
        return nil
    }

    private static func text(_ row: [String?]?) -> String {
        guard let row else { return "(none)" }
        return "(" + row.map { $0 ?? "NULL" }.joined(separator: ", ") + ")"
    }

    /// The failure message: the seed, every step with the failing one
    /// marked, and what went wrong.
    static func report(_ sequence: SyncSequence, failedAt index: Int, _ what: String) -> String {
        let steps = sequence.steps.enumerated().map { number, planned in
            "\(number == index ? "→" : " ") \(number + 1). \(planned)"
        }
        return "seed \(sequence.seed), after step \(index + 1): \(what)\nsteps:\n" + steps.joined(separator: "\n")
    }

    /// A SQLite store's project tables (every table but SQLite's and
    /// sluice's own), each value `quote`d so that its type shows, and
    /// ``digestSums(_:)``.
    static func sqliteContents(_ path: String) -> [Table] {
        sqliteTables(path) + [digestSums(path)]
    }

    /// Whether the units and bytes a SQLite digest set keeps in its state
    /// row equal a count of the units a run reads from it (its pages with
    /// its changes merged in), as a table of one row (`agree` also when the
    /// store keeps no set), so that a run that leaves them apart differs
    /// from the full side, which keeps none.
    static func digestSums(_ path: String) -> Table {
        let reader = StoreReader(path)
        var verdict = "agree"
        if reader.value("SELECT name FROM sqlite_schema WHERE name = '_sluice_digest_state'") != nil {
            if let sums = sqliteDigestSums(path) {
                if sums.counted != sums.kept {
                    verdict = "kept units and bytes \(sums.kept), counted \(sums.counted)"
                }
            } else {
                verdict = "the digest set could not be read"
            }
        }
        return Table(name: "(the digest set's kept sums)", columns: [], rows: [[verdict]])
    }

    /// A SQLite store's project tables, as ``sqliteContents(_:)`` gives them.
    private static func sqliteTables(_ path: String) -> [Table] {
        let reader = StoreReader(path)
        let names = reader.rows(
            #"SELECT name FROM sqlite_schema WHERE type = 'table' AND name NOT LIKE '\_sluice\_%' ESCAPE '\' "#
                + #"AND name NOT LIKE 'sqlite\_%' ESCAPE '\' ORDER BY name"#
        ).compactMap { $0[0] }
        return names.map { name in
            let columns = reader.rows("SELECT name, type FROM pragma_table_info('\(name)') ORDER BY cid")
            let quoted = columns.map { "quote(\"\($0[0] ?? "")\")" }
            let order = (1...max(1, columns.count)).map(String.init).joined(separator: ", ")
            return Table(
                name: name, columns: columns.map { "\($0[0] ?? "") \($0[1] ?? "")" },
                rows: reader.rows("SELECT \(quoted.joined(separator: ", ")) FROM \"\(name)\" ORDER BY \(order)"))
        }
    }

    /// A PostgreSQL database's project tables (those of its current schema
    /// but sluice's own), rows as the server writes them in text.
    static func postgresContents(_ conninfo: String) -> [Table] {
        let reader = PostgresReader(conninfo)
        let names = reader.rows(
            "SELECT table_name FROM information_schema.tables WHERE table_schema = current_schema() "
                + #"AND table_type = 'BASE TABLE' AND table_name NOT LIKE '\_sluice\_%' ORDER BY table_name"#
        ).compactMap { $0[0] }
        return names.map { name in
            let columns = reader.rows(
                "SELECT column_name, data_type FROM information_schema.columns WHERE table_schema = current_schema() "
                    + "AND table_name = '\(name)' ORDER BY ordinal_position")
            let order = (1...max(1, columns.count)).map(String.init).joined(separator: ", ")
            return Table(
                name: name, columns: columns.map { "\($0[0] ?? "") \($0[1] ?? "")" },
                rows: reader.rows("SELECT * FROM \"\(name)\" ORDER BY \(order)"))
        }
    }
}
