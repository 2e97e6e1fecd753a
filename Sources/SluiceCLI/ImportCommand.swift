import ArgumentParser
import CSluiceMalloc
import Foundation
import Sluice

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// `sluice import`: read inputs into the store.
struct ImportCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "import",
        abstract:
            "Import inputs into a SQLite store: new keys inserted, changed rows updated, unchanged rows left alone.",
        discussion: """
            With --mapping, the mapping file says where records are and how fields become columns.
            Without one, give --entity and --key: JSON Lines (or a JSON array) of objects become rows,
            with a column per top-level member.
            Exit codes: 0 ok, 64 usage, 65 bad input data or deletions beyond --max-delete (also: a dry run whose real run would fail), 66 input not found, 74 store error, 78 bad mapping.
            """)

    @Option(help: "The mapping file (YAML or JSON).")
    var mapping: String?

    @Option(
        help:
            "The store to create or update: a SQLite file, a PostgreSQL database (postgresql://user@host/db, libpq's keyword form, or postgresql: for the PG* variables), or null: to keep nothing (for measuring everything but the store)."
    )
    var into: String

    @Option(help: "Without a mapping: the entity (table) name.")
    var entity: String?

    @Option(help: "Without a mapping: the key member of each object.")
    var key: String?

    @Option(help: "The input syntax: \(InputFormat.choices) (default: from each file name).")
    var format: InputFormat?

    @Option(help: "How rows are written, for entities whose mapping sets no mode: \(WriteMode.choices).")
    var mode: WriteMode = .upsert

    @Flag(
        help:
            "After a complete, error-free run, delete stored rows whose keys the run did not see (entities may opt out)."
    )
    var deleteMissing = false

    @Flag(
        help:
            "Continue the interrupted import of the same inputs from its last committed batch. The mapping, --mode, --delete-missing, --allow-empty-delete and --format must be those it was started with (it is refused otherwise); --max-delete may differ."
    )
    var resume = false

    @Flag(help: "Let --delete-missing empty an entity of which the run saw no record.")
    var allowEmptyDelete = false

    @Option(
        help: ArgumentHelp(
            "A brake on --delete-missing: before deleting anything, refuse (exit 65) a run that would delete more than N rows, or P% of the stored rows, from any entity.",
            valueName: "N|P%"))
    var maxDelete: DeleteLimit?

    @Flag(
        help:
            "Read, map, compare and sweep as a run would, in one transaction rolled back at the end: report what would be inserted, updated, left alone and deleted, and write nothing (exit 65 when the real run would fail, e.g. beyond --max-delete). Not with --resume."
    )
    var dryRun = false

    @Flag(
        help:
            "Parse every record and keep no record digests: the next run parses every record again and keeps new ones. For a store something other than sluice wrote (docs/record-digests.md)."
    )
    var noSkip = false

    @Option(help: "Write the counts, every table written and the warnings as JSON to this file.")
    var statsJson: String?

    @Flag(name: .shortAndLong, help: "Show neither progress nor the summary; warnings and errors only.")
    var quiet = false

    @Option(
        help:
            "Progress on standard error: bar (a line that redraws), json (one object per line, for schedulers) or none (default: bar on a terminal, otherwise none)."
    )
    var progress: ProgressStyle?

    @Option(
        help:
            "key: sort rows by key in spilled runs and apply them once the input is read (fast on shuffled keys; keeps record digests); input: commit batches in input order as they come, so that --resume reads on from the last (for input already in key order: on shuffled keys several times slower, and no record digests)."
    )
    var order: ApplyOrder = ImportOptions().order

    @Option(help: "Key-ordered apply: MiB of rows held before a sorted run is spilled.")
    var sortMib = SortOptions().memoryBytes >> 20

    @Option(help: "Key-ordered apply: directory of the temporary run files (default: the store's).")
    var sortDir: String?

    @Option(help: "Rows per batch (all entities together).")
    var batchRows = BatchLimits().maxRows

    @Option(help: "Bytes per batch (all entities together).")
    var batchBytes = BatchLimits().maxBytes

    @Option(help: "WAL pages written before they are copied into the database file.")
    var walCheckpoint = StoreOptions().walCheckpointPages

    @Option(help: "SQLite page cache, in MiB.")
    var cacheMib = StoreOptions().pageCacheBytes >> 20

    @Option(help: "Page size of a store being created, in bytes (512 to 65536, a power of two).")
    var pageSize = StoreOptions().pageSize

    @Option(help: "Bytes read and parsed at a time.")
    var chunkSize = Input.defaultChunkSize

    @Option(
        help:
            "Threads that parse and map records (default: the cores the process may use, at most 16). JSON Lines, one JSON document and XML, record digests included; any number gives the same result."
    )
    var threads: Int?

    @Option(help: "Largest record, in bytes.")
    var maxRecordBytes = RecordLimits().maxRecordBytes

    @Option(help: "Deepest nesting of elements or containers.")
    var maxDepth = RecordLimits().maxDepth

    @Option(help: "Largest single value (string, number, text), in bytes.")
    var maxFieldBytes = RecordLimits().maxFieldBytes

    @Option(help: "Most fields in one record.")
    var maxFields = RecordLimits().maxFields

    @Argument(help: "Inputs, in order (- for standard input); gzip, bzip2, zstd and xz are read directly.")
    var inputs: [String]

    func validate() throws {
        if mapping == nil && (entity == nil || key == nil) {
            throw ValidationError(
                "Give --mapping FILE, or --entity NAME and --key FIELD to import JSON objects without a mapping.")
        }
        if mapping != nil && (entity != nil || key != nil) {
            throw ValidationError("--entity and --key are for imports without --mapping.")
        }
        // Each bound is what the machinery can hold: arena offsets are 32-bit
        // (records and values under 1 GiB), chunks are allocated four ahead.
        let ranges: [(name: String, value: Int, range: ClosedRange<Int>)] = [
            ("--batch-rows", batchRows, 1...10_000_000), ("--batch-bytes", batchBytes, 1_024...(1 << 30)),
            ("--chunk-size", chunkSize, 1...(64 << 20)), ("--cache-mib", cacheMib, 0...65_536),
            ("--sort-mib", sortMib, 1...4_096), ("--wal-checkpoint", walCheckpoint, 0...10_000_000),
            ("--max-record-bytes", maxRecordBytes, 1...(1 << 30)), ("--max-field-bytes", maxFieldBytes, 1...(1 << 30)),
            ("--max-depth", maxDepth, 1...100_000), ("--max-fields", maxFields, 1...100_000_000),
            ("--threads", threads ?? 1, 1...1_024),
        ]
        for (name, value, range) in ranges where !range.contains(value) {
            throw ValidationError("\(name) must be from \(range.lowerBound) to \(range.upperBound); it is \(value).")
        }
        if pageSize < 512 || pageSize > 65_536 || pageSize & (pageSize - 1) != 0 {
            throw ValidationError("--page-size must be a power of two from 512 to 65536.")
        }
        // What can be checked before any input is read is checked here.
        if StoreTarget(into).file != nil { try Self.requireDirectory(of: into, for: "--into") }
        if let statsJson { try Self.requireDirectory(of: statsJson, for: "--stats-json") }
        if let sortDir {
            var isDirectory: ObjCBool = false
            guard FileManager.default.fileExists(atPath: sortDir, isDirectory: &isDirectory), isDirectory.boolValue
            else {
                throw ValidationError("--sort-dir \(sortDir) is not a directory.")
            }
        }
    }

    /// Fails unless the directory that would hold `path` exists and can be
    /// written.
    private static func requireDirectory(of path: String, for option: String) throws {
        let directory = (path as NSString).deletingLastPathComponent
        let folder = directory.isEmpty ? "." : directory
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: folder, isDirectory: &isDirectory), isDirectory.boolValue else {
            throw ValidationError("\(option) \(path): the directory \(folder) does not exist.")
        }
        guard FileManager.default.isWritableFile(atPath: folder) else {
            throw ValidationError("\(option) \(path): the directory \(folder) cannot be written.")
        }
    }

    func run() throws {
        // Row and merge buffers of 1 to 8 MiB are freed and allocated again
        // all run long; mmapped, they go back to the system when freed. On the
        // 1 GB events benchmark, peak RSS and merge-thread CPU: glibc's
        // default 56.9 MB, 6.2 s; threshold 128 KiB 50.0 MB, 9.9 s; 1 MiB
        // 51.4 MB, 8.0 s; 4 MiB 57.1 MB, 6.3 s.
        _ = sluice_fix_mmap_threshold(1 << 20)
        // Parse workers, their forwarder and each run written aside are
        // threads of their own, and glibc gives each an arena that keeps what
        // was freed into it: 2,000,000 events on 16 threads peaked at 67.2
        // MiB, 61.6 with one arena for all, for no more CPU (release build;
        // docs/performance.md, "Runs, items and malloc arenas with threads").
        _ = sluice_limit_malloc_arenas(1)
        var options = ImportOptions()
        options.format = format
        options.store.mode = mode
        options.store.deleteMissing = deleteMissing
        options.allowEmptyDelete = allowEmptyDelete
        options.maxDelete = maxDelete
        options.dryRun = dryRun
        options.noSkip = noSkip
        options.resume = resume
        options.resumeCommand = ResumeCommand.line(
            arguments: CommandLine.arguments, directory: FileManager.default.currentDirectoryPath, store: into)
        options.chunkSize = chunkSize
        if let threads { options.threads = threads }
        options.order = order
        options.sort.memoryBytes = sortMib << 20
        options.sort.directory = sortDir
        options.batch.maxRows = batchRows
        options.batch.maxBytes = batchBytes
        options.store.pageCacheBytes = cacheMib << 20
        options.store.pageSize = pageSize
        options.store.walCheckpointPages = walCheckpoint
        options.store.lookupKeys = min(batchRows, 10_000)
        options.limits.maxRecordBytes = maxRecordBytes
        options.limits.maxDepth = maxDepth
        options.limits.maxFieldBytes = maxFieldBytes
        options.limits.maxFields = maxFields
        let report: ImportReport
        let interruption = Interruption()
        let display = ProgressDisplay(style: progress ?? (quiet || isatty(2) == 0 ? .none : .bar))
        do {
            let importer = try makeImporter(options)
            defer { display.clear() }
            report = try importer.runBlocking(
                inputs: inputs, progress: display.show, cancellation: interruption.cancellation)
        } catch {
            if case .cancelled = error, let signal = interruption.receivedSignal {
                display.fail(
                    "stopped by \(Interruption.name(of: signal)): the open transaction was rolled back, what was committed before it "
                        + "is kept and the run is recorded as cancelled; run the same command with --resume to continue",
                    exit: Interruption.exitCode(for: signal))
                throw ExitCode(Interruption.exitCode(for: signal))
            }
            display.fail("\(error)", exit: ExitStatus.code(for: error))
            throw ExitCode(ExitStatus.code(for: error))
        }
        if !quiet { print(Summary.text(report)) }
        for warning in report.warnings { display.warn(warning) }
        if let statsJson {
            do {
                try Summary.writeJSON(report, to: statsJson)
            } catch {
                display.fail("cannot write \(statsJson): \(error)", exit: ExitStatus.ioError)
                throw ExitCode(ExitStatus.ioError)
            }
        }
        if let failure = report.wouldFail {
            display.fail("dry run: the real run would fail: \(failure)", exit: ExitStatus.dataError)
            throw ExitCode(ExitStatus.dataError)
        }
    }

    private func makeImporter(_ options: ImportOptions) throws(ImportError) -> Importer {
        if let entity, let key { return Importer(entity: entity, key: key, store: into, options: options) }
        guard let mapping else { throw .usage("no mapping") }
        // A mapping file that is not there is a missing input (66), not a bad mapping (78).
        guard FileManager.default.fileExists(atPath: mapping) else { throw .input(.notFound(path: mapping)) }
        let loaded: Mapping
        do { loaded = try Mapping.load(path: mapping) } catch { throw .mapping(error) }
        return try Importer(mapping: loaded, store: into, options: options)
    }
}

extension WriteMode: ExpressibleByArgument {}
extension ApplyOrder: ExpressibleByArgument {}
extension DeleteLimit: ExpressibleByArgument {
    public init?(argument: String) { self.init(argument) }
}
