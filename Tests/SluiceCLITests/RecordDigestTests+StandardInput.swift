import Foundation
import SluiceTestSupport
import Testing

/// Runs over standard input (docs/record-digests.md, "Standard input"): a
/// run that skips reads the stream once into a spool and plans from it;
/// each must leave the store a `--no-skip` run leaves.
extension RecordDigestTests {
    /// `file`'s bytes, compressed by zstd when `zstd` says so.
    func bytes(_ file: String, zstd: Bool = false) throws -> Data {
        try Data(contentsOf: URL(fileURLWithPath: zstd ? try compressed(file) : file))
    }

    /// `file` compressed by zstd beside it.
    func compressed(_ file: String) throws -> String {
        let path = file + ".zst"
        if !FileManager.default.fileExists(atPath: path) {
            let result = try runCommand("/usr/bin/zstd", ["-q", "-f", file, "-o", path])
            #expect(result.status == 0, "\(result.stderr)")
        }
        return path
    }

    /// Imports `input` from standard input into `store` with `arguments`.
    func piped(_ store: String, _ arguments: [String], _ input: Data) throws -> CommandResult {
        try runCommand(
            sluice,
            ["import", "--mapping", Self.mapping, "--into", store, "--stats-json", stats(store), "--format", "jsonl"]
                + arguments + ["-"], input: input)
    }

    /// Each step's file piped to a store that skips and to one that parses
    /// everything; the same rows and deletions after each. Returns the
    /// unchanged records each skipping step reported.
    func pipedDifferential(_ kind: Kind, _ steps: [(arguments: [String], input: Data)]) throws -> [Int] {
        let (skipping, parsing) = (try store(kind), try store(kind))
        var unchanged: [Int] = []
        for (index, step) in steps.enumerated() {
            let skipped = try piped(skipping, step.arguments, step.input)
            #expect(skipped.status == 0, "step \(index + 1): \(skipped.stderr)")
            #expect(!skipped.stderr.contains("record digests"), "step \(index + 1): \(skipped.stderr)")
            unchanged.append(try unchangedRecords(skipping))
            let parsed = try piped(parsing, ["--no-skip"] + step.arguments, step.input)
            #expect(parsed.status == 0, "step \(index + 1): \(parsed.stderr)")
            #expect(rows(skipping) == rows(parsing), "after step \(index + 1): \(step.arguments)")
            #expect(try deleted(skipping) == deleted(parsing), "after step \(index + 1): \(step.arguments)")
        }
        return unchanged
    }

    /// Standard input keeps and uses digests: the first run into an empty
    /// store parses all, the same stream again skips every record, the next
    /// day with `--delete-missing` (zstd-compressed) parses only what
    /// changed and deletes what a full run deletes. Before, every run over
    /// standard input parsed every record and voided the set.
    @Test(arguments: kinds) func standardInputSkipsAsFilesDo(kind: Kind) throws {
        let (day0, day1) = days()
        let sweep = ["--delete-missing"]
        let unchanged = try pipedDifferential(
            kind,
            [
                ([], try bytes(day0)), ([], try bytes(day0)), (sweep, try bytes(day1, zstd: true)),
                (sweep, try bytes(day1)), (sweep, try bytes(day0, zstd: true)),
            ])
        #expect(unchanged == [0, 301, 300 - 30 - 38, 290, 300 - 30 - 38])
    }

    /// Compressed files given by path keep and use digests as plain ones
    /// do: a record's digest is of its decompressed bytes, so a dump
    /// compressed by gzip skips the same dump plain, or compressed by xz,
    /// and the next day's, by bzip2 then zstd, parses only what changed and
    /// deletes what a full run deletes.
    @Test(arguments: kinds) func compressedFilesSkipAsPlainOnesDo(kind: Kind) throws {
        let (day0, day1) = days()
        let sweep = ["--delete-missing"]
        let unchanged = try differential(
            kind,
            [
                [try packed(day0, "gzip", "gz")], [day0], [try packed(day0, "xz", "xz")],
                sweep + [try packed(day1, "bzip2", "bz2")], sweep + [try compressed(day1)],
            ])
        #expect(unchanged == [0, 301, 301, 300 - 30 - 38, 290])
    }

    /// `file` compressed by `tool` (gzip, bzip2 or xz) beside it, as
    /// `file.extension`.
    func packed(_ file: String, _ tool: String, _ extension: String) throws -> String {
        let result = try runCommand("/usr/bin/" + tool, ["-k", "-f", file])
        #expect(result.status == 0, "\(result.stderr)")
        return file + "." + `extension`
    }

    /// Standard input and a file of the same records are the same units: a
    /// store made from a file skips the stream, and the other way round
    /// (under the same options: `--format` is part of the fingerprint).
    @Test(arguments: kinds) func aStreamAndAFileOfTheSameRecordsSkipEachOther(kind: Kind) throws {
        let (day0, _) = days()
        let target = try store(kind)
        _ = try run(target, ["--format", "jsonl", day0])
        #expect(try piped(target, [], try bytes(day0)).status == 0)
        #expect(try unchangedRecords(target) == 301)
        _ = try run(target, ["--format", "jsonl", day0])
        #expect(try unchangedRecords(target) == 301)
    }

    /// The zero-config form over standard input (`--entity --key`): the
    /// second run skips every record, the next day its unchanged ones, and
    /// the table is a full run's after each.
    @Test(arguments: kinds) func zeroConfigStandardInputSkips(kind: Kind) throws {
        let day0 = file((1...200).map { #"{"id": \#($0), "kind": "k\#($0 % 3)", "score": \#($0 * 2)}"# })
        let day1 = file(
            (1...200).filter { $0 % 9 != 0 }.map {
                #"{"id": \#($0), "kind": "k\#($0 % 3)", "score": \#($0 % 5 == 0 ? -$0 : $0 * 2)}"#
            })
        let (skipping, parsing) = (try store(kind), try store(kind))
        var unchanged: [Int] = []
        for step in [day0, day0, day1] {
            for (target, extra) in [(skipping, [String]()), (parsing, ["--no-skip"])] {
                let result = try runCommand(
                    sluice,
                    ["import", "--entity", "Event", "--key", "id", "--into", target, "--stats-json", stats(target)]
                        + extra + ["--format", "jsonl", "-"], input: try bytes(step))
                #expect(result.status == 0, "\(result.stderr)")
            }
            unchanged.append(try unchangedRecords(skipping))
            let sql = "SELECT * FROM \"Event\" ORDER BY 1"
            if kind == .sqlite {
                #expect(StoreReader(skipping).rows(sql) == StoreReader(parsing).rows(sql))
            } else {
                #expect(PostgresReader(skipping).rows(sql) == PostgresReader(parsing).rows(sql))
            }
        }
        #expect(unchanged == [0, 200, 178 - 36])
    }

    /// A damaged stream or file fails a run that skips as it fails a full
    /// run, with the same message (record number and decompressed byte
    /// included) and exit status, and leaves the same rows: zstd cut short,
    /// and plain JSON Lines cut inside a record. A run that skips never
    /// claims it skipped what it did not read. Before, a compressed file cut
    /// short failed the plan's hash pass, without the record number.
    @Test(arguments: kinds) func aDamagedStreamFailsAsAFullRunFails(kind: Kind) throws {
        let (day0, day1) = days()
        let whole = try bytes(day1, zstd: true)
        let plain = try bytes(day1)
        let cases = [
            (whole.prefix(whole.count * 2 / 3), true), (plain.prefix(plain.count / 2 + 7), true),
            (whole.prefix(whole.count * 2 / 3), false),
        ]
        for (damaged, stream) in cases {
            let (skipping, parsing) = (try store(kind), try store(kind))
            let path = TestPaths.temporaryDirectory().appendingPathComponent("cut.jsonl").path
            try Data(damaged).write(to: URL(fileURLWithPath: path))
            var failures: [String] = []
            for (target, extra) in [(skipping, [String]()), (parsing, ["--no-skip"])] {
                #expect(try piped(target, [], try bytes(day0)).status == 0)
                let failed =
                    stream
                    ? try piped(target, extra, Data(damaged))
                    : try runCommand(
                        sluice,
                        ["import", "--mapping", Self.mapping, "--into", target, "--format", "jsonl"] + extra + [path])
                #expect(failed.status != 0)
                failures.append("exit \(failed.status): \(failed.stderr)")
            }
            #expect(failures[0] == failures[1], "stream \(stream)")
            #expect(failures[0].contains("record "), "\(failures[0])")
            #expect(rows(skipping) == rows(parsing), "stream \(stream)")
        }
    }
}
