import CSluiceSQLite3
import Foundation

/// Where things are, for tests: the repository, its corpus files
/// (Tests/Corpora, sources in Tests/Corpora/SOURCES.md), and fresh
/// temporary directories.
public enum TestPaths {
    /// The repository's root (the folder holding Package.swift).
    public static let repository: URL = {
        var url = URL(fileURLWithPath: #filePath)
        while url.path != "/" {
            url.deleteLastPathComponent()
            if FileManager.default.fileExists(atPath: url.appendingPathComponent("Package.swift").path) { return url }
        }
        return URL(fileURLWithPath: FileManager.default.currentDirectoryPath)
    }()

    /// `Tests/Corpora` in the repository; `SLUICE_CORPORA` points at another
    /// copy with the same layout.
    public static var corpora: URL {
        if let custom = ProcessInfo.processInfo.environment["SLUICE_CORPORA"] { return URL(fileURLWithPath: custom) }
        return repository.appendingPathComponent("Tests/Corpora")
    }

    /// The path of a corpus file, e.g. `corpus("stackexchange/french.meta/Posts.xml")`.
    public static func corpus(_ relative: String) -> String {
        corpora.appendingPathComponent(relative).path
    }

    /// The executable `name` the tests run: in the directory that
    /// `SLUICE_TEST_PRODUCTS` names when it is set (scripts/test.sh builds
    /// `sluice` and `sluice-library-example` in release there: what users
    /// run, and the CLI tests' work took a sixth of the debug binary's CPU),
    /// else the one this package built beside the running test bundle (a
    /// plain `swift test` runs the debug build), else in .build/debug.
    public static func builtProduct(_ name: String) -> String {
        if let products = ProcessInfo.processInfo.environment["SLUICE_TEST_PRODUCTS"] {
            return URL(fileURLWithPath: products).appendingPathComponent(name).path
        }
        var url = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
        while url.path != "/" {
            let candidate = url.appendingPathComponent(name).path
            if FileManager.default.isExecutableFile(atPath: candidate) { return candidate }
            url.deleteLastPathComponent()
        }
        return repository.appendingPathComponent(".build/debug/\(name)").path
    }

    /// A new empty directory under the system's temporary directory,
    /// removed when the test process exits (a full run made 1.8 GB of them)
    /// unless `SLUICE_KEEP_TEST_FILES` is set.
    public static func temporaryDirectory() -> URL {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("sluice-tests-\(UUID().uuidString)")
        try? FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        TemporaryDirectories.shared.add(url)
        return url
    }

    /// Writes `text` to a new file in a temporary directory and returns its path.
    public static func file(_ name: String, _ text: String) -> String {
        let url = temporaryDirectory().appendingPathComponent(name)
        try? text.write(to: url, atomically: true, encoding: .utf8)
        return url.path
    }
}

/// The directories ``TestPaths/temporaryDirectory()`` made, removed at exit.
final class TemporaryDirectories: @unchecked Sendable {
    static let shared: TemporaryDirectories = {
        let directories = TemporaryDirectories()
        if ProcessInfo.processInfo.environment["SLUICE_KEEP_TEST_FILES"] == nil {
            atexit { TemporaryDirectories.shared.removeAll() }
        }
        return directories
    }()

    private let lock = NSLock()
    private var urls: [URL] = []

    func add(_ url: URL) { lock.withLock { urls.append(url) } }

    func removeAll() {
        for url in lock.withLock({ urls }) { try? FileManager.default.removeItem(at: url) }
    }
}

/// Reads a SQLite store back for assertions.
public final class StoreReader {
    private var db: OpaquePointer?

    /// Opens the store at `path` read-only, or when `writable` for writing
    /// too (creating it), to set up a store as another program left it.
    public init(_ path: String, writable: Bool = false) {
        sqlite3_open_v2(path, &db, writable ? SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE : SQLITE_OPEN_READONLY, nil)
    }

    deinit { sqlite3_close_v2(db) }

    /// The rows of `sql`, every value as text (`nil` for NULL).
    public func rows(_ sql: String) -> [[String?]] {
        var statement: OpaquePointer?
        guard sqlite3_prepare_v2(db, sql, -1, &statement, nil) == SQLITE_OK else {
            return [["error: " + String(cString: sqlite3_errmsg(db))]]
        }
        defer { sqlite3_finalize(statement) }
        var result: [[String?]] = []
        while sqlite3_step(statement) == SQLITE_ROW {
            result.append(
                (0..<sqlite3_column_count(statement)).map { column in
                    sqlite3_column_text(statement, column).map { String(cString: $0) }
                })
        }
        return result
    }

    /// The single value of `sql`.
    public func value(_ sql: String) -> String? { rows(sql).first?.first ?? nil }

    /// `SELECT count(*) FROM table`.
    public func count(_ table: String) -> Int { Int(value("SELECT count(*) FROM \"\(table)\"") ?? "") ?? -1 }
}

/// Runs a command and captures its output.
public struct CommandResult {
    public var status: Int32
    public var stdout: String
    public var stderr: String
}

/// Runs `executable` with `arguments`, standard input from `input` if given.
public func runCommand(_ executable: String, _ arguments: [String], input: Data? = nil) throws -> CommandResult {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: executable)
    process.arguments = arguments
    let out = Pipe()
    let err = Pipe()
    process.standardOutput = out
    process.standardError = err
    let inPipe = Pipe()
    process.standardInput = inPipe
    try process.run()
    if let input { inPipe.fileHandleForWriting.write(input) }
    try inPipe.fileHandleForWriting.close()
    // Standard error is drained on another thread: a command that fills one
    // pipe while the other is being read would otherwise wait forever.
    let errors = LockedData()
    let reader = Thread { errors.set(err.fileHandleForReading.readDataToEndOfFile()) }
    reader.start()
    let stdout = out.fileHandleForReading.readDataToEndOfFile()
    process.waitUntilExit()
    let stderr = errors.wait()
    return CommandResult(
        status: process.terminationStatus, stdout: String(decoding: stdout, as: UTF8.self),
        stderr: String(decoding: stderr, as: UTF8.self))
}

/// Data one thread sets and another waits for.
final class LockedData: @unchecked Sendable {
    private let condition = NSCondition()
    private var data: Data?

    func set(_ value: Data) {
        condition.withLock {
            data = value
            condition.signal()
        }
    }

    func wait() -> Data {
        condition.withLock {
            while data == nil { condition.wait() }
            return data ?? Data()
        }
    }
}

/// Counts `<row` start tags in a file, the Stack Exchange way of counting records.
public func countOccurrences(of needle: String, inFile path: String) -> Int {
    guard let data = FileManager.default.contents(atPath: path) else { return -1 }
    let bytes = [UInt8](data)
    let pattern = [UInt8](needle.utf8)
    var count = 0
    var index = 0
    while index + pattern.count <= bytes.count {
        if bytes[index] == pattern[0] && bytes[index..<(index + pattern.count)].elementsEqual(pattern) {
            count += 1
            index += pattern.count
        } else {
            index += 1
        }
    }
    return count
}

/// A counter two threads can share, for tests that watch another thread.
public final class LockedCounter: @unchecked Sendable {
    private let lock = NSLock()
    private var count = 0

    public init() {}

    public var value: Int { lock.withLock { count } }

    public func increment() { lock.withLock { count += 1 } }
}

/// Writes `data` to `pipe`'s writing end with `write(2)` and closes it
/// unless `keepOpen`; a reader that is gone (killed) ends the write
/// quietly: SIGPIPE is ignored in the test process, and EPIPE stops it.
public func writeQuietly(_ data: Data, to pipe: Pipe, keepOpen: Bool = false) {
    signal(SIGPIPE, SIG_IGN)
    let descriptor = pipe.fileHandleForWriting.fileDescriptor
    data.withUnsafeBytes { bytes in
        var done = 0
        while done < bytes.count {
            let wrote = write(descriptor, bytes.baseAddress! + done, bytes.count - done)
            if wrote < 0 && errno == EINTR { continue }
            guard wrote > 0 else { break }
            done += wrote
        }
    }
    if !keepOpen { try? pipe.fileHandleForWriting.close() }
}
