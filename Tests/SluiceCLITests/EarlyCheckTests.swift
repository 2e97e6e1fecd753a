import Foundation
import SluiceTestSupport
import Testing

/// Options and paths that can be checked before any input is read are
/// checked then (issue 17): before, `--chunk-size 100000000000` aborted
/// (exit 134, "failed to allocate"), and a bad `--stats-json` failed only
/// after the import had committed.
@Suite struct EarlyCheckTests {
    let input = TestPaths.file("one.jsonl", "{\"id\": 1}\n")

    func importing(_ extra: [String], into store: String? = nil) throws -> CommandResult {
        let store = store ?? TestPaths.temporaryDirectory().appendingPathComponent("s.sqlite").path
        return try runCommand(sluice, ["import", "--into", store, "--entity", "E", "--key", "id"] + extra + [input])
    }

    @Test(arguments: [
        (["--chunk-size", "100000000000"], "--chunk-size must be from 1 to 67108864"),
        (["--batch-rows", "0"], "--batch-rows must be from 1 to 10000000"),
        (["--sort-mib", "100000"], "--sort-mib must be from 1 to 4096"),
        (["--max-field-bytes", "5000000000"], "--max-field-bytes must be from 1 to 1073741824"),
        (
            ["--stats-json", "/nonexistent/s.json"],
            "--stats-json /nonexistent/s.json: the directory /nonexistent does not exist"
        ),
        (["--sort-dir", "/nonexistent"], "--sort-dir /nonexistent is not a directory"),
    ]) func badOptionsAreRefusedBeforeReading(arguments: [String], message: String) throws {
        let store = TestPaths.temporaryDirectory().appendingPathComponent("s.sqlite").path
        let result = try importing(arguments, into: store)
        #expect(result.status == 64, "\(result.stderr)")
        #expect(result.stderr.contains(message), "\(result.stderr)")
        #expect(!FileManager.default.fileExists(atPath: store), "the store was created")
    }

    /// A missing mapping file is a missing input, as the README's exit codes
    /// say (it was 78, a bad mapping; issue 18).
    @Test func aMissingMappingFileIsExit66() throws {
        let store = TestPaths.temporaryDirectory().appendingPathComponent("s.sqlite").path
        let result = try runCommand(
            sluice, ["import", "--mapping", "/nonexistent/mapping.yml", "--into", store, input])
        #expect(result.status == 66, "\(result.stderr)")
        #expect(result.stderr.contains("/nonexistent/mapping.yml"), "\(result.stderr)")
    }

    @Test func aStoreInAMissingDirectoryIsNamed() throws {
        let result = try importing([], into: "/nonexistent/dir/s.sqlite")
        #expect(result.status == 64)
        #expect(
            result.stderr.contains("--into /nonexistent/dir/s.sqlite: the directory /nonexistent/dir does not exist"),
            "\(result.stderr)")
    }

    /// `status` lists user tables whose names only look like sluice's or
    /// SQLite's to an unescaped LIKE, and reads a store sluice did not make.
    @Test func statusShowsEveryUserTableOfAnyStore() throws {
        let store = TestPaths.temporaryDirectory().appendingPathComponent("foreign.sqlite").path
        let made = try runCommand(
            "/usr/bin/sqlite3",
            [
                store,
                "CREATE TABLE Asluice_data (x); CREATE TABLE sqliteXdata (y); INSERT INTO Asluice_data VALUES (1);",
            ])
        #expect(made.status == 0, "\(made.stderr)")
        let result = try runCommand(sluice, ["status", store])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(
            result.stdout.contains("Asluice_data: 1 rows") && result.stdout.contains("sqliteXdata: 0 rows"),
            "\(result.stdout)")
    }
}
