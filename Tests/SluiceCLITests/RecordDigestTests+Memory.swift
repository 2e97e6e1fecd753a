import Foundation
import SluiceTestSupport
import Testing

extension RecordDigestTests {
    /// A run whose file replaces the store's digest set (a file of a few
    /// records after a dump of many) removes every unit that file does not
    /// have. It held every removed digest, and twice more in the save: the
    /// update file of `Benchmarks/postgres.py` (400,000 events) onto a
    /// 2,000,000-event store peaked at 313 MB into SQLite and 172 MB into
    /// PostgreSQL (release build); here, replacing 100,000 and 300,000 units
    /// peaked at 48 and 77 MB (release build). The removed digests now go to
    /// disk and are saved in bounded transactions: 42 and 48 MB (debug build;
    /// what is left is SQLite's page cache filling on the larger store). The
    /// set then holds the small file's units alone, and the next run of that
    /// file skips every record.
    @Test func replacingALargeDigestSetDoesNotHoldItsUnits() throws {
        func replace(units: Int) throws -> Int {
            let directory = TestPaths.temporaryDirectory()
            let dump = directory.appendingPathComponent("dump.jsonl").path
            let lines = (0..<units).map { #"{"id":\#(($0 * 7919) % units),"v":\#($0)}"# }
            try (lines.joined(separator: "\n") + "\n").write(toFile: dump, atomically: true, encoding: .utf8)
            let small = directory.appendingPathComponent("small.jsonl").path
            let changed = (0..<10).map { #"{"id":\#($0),"v":-1}"# }
            try (changed.joined(separator: "\n") + "\n").write(toFile: small, atomically: true, encoding: .utf8)
            let store = directory.appendingPathComponent("replace.sqlite").path
            let zeroConfig = ["import", "--into", store, "--entity", "E", "--key", "id", "--format", "jsonl"]
            let first = try runCommand(sluice, zeroConfig + [dump])
            #expect(first.status == 0, "\(first.stderr)")
            let (status, peakKiB) = try runMeasured(sluice, zeroConfig + [small], inputPath: "/dev/null")
            #expect(status == 0)
            #expect(StoreReader(store).count("E") == units)
            let json = try runCommand(sluice, ["status", "--json", store]).stdout
            let object = try JSONSerialization.jsonObject(with: Data(json.utf8)) as? [String: Any]
            let digests = try #require(object?["digests"] as? [String: Any], "\(json)")
            #expect(digests["units"] as? Int == 10 && digests["valid"] as? Bool == true, "\(json)")
            let again = try runCommand(sluice, zeroConfig + ["--stats-json", stats(store), small])
            #expect(again.status == 0, "\(again.stderr)")
            #expect(try unchangedRecords(store) == 10)
            return peakKiB
        }
        let few = try replace(units: 100_000)
        let many = try replace(units: 300_000)
        print("replacing a digest set: 100,000 units peak \(few) KiB, 300,000 units peak \(many) KiB")
        #expect(many < few + 12 * 1024, "100,000 units: \(few) KiB, 300,000 units: \(many) KiB")
    }

    /// A run that keeps some records and parses many new ones probes the new
    /// ones first for the keys they produce (docs/record-digests.md). The
    /// probe held up to 1,000,000 keys at about 180 bytes each: an update
    /// file of 400,000 events onto a set of one record peaked at 146 MB
    /// against 57 with `--no-skip`. Then it held at most 100,000 and past
    /// that parsed every record, the kept ones too. It now holds the first
    /// ``ProbedKeys/maxHeld`` (100,000) and spills the others sorted to
    /// disk: 300,000 new records cost about what 100,000 do (before, with
    /// keys of 46 bytes, 54 and 74 MB, release build; with the spill 58.3
    /// and 57.8 MB, debug build), and the kept records are skipped in both.
    @Test func aLargeChangeBesideKeptRecordsDoesNotHoldAllItsKeys() throws {
        func change(records: Int) throws -> Int {
            let directory = TestPaths.temporaryDirectory()
            // Keys of 46 bytes, as a text key of a dump may be.
            func key(_ number: Int) -> String { String(format: "event-%040d", number) }
            let kept = (0..<2_000).map { #"{"id":"\#(key($0))","v":\#($0)}"# }
            let dump = directory.appendingPathComponent("dump.jsonl").path
            try (kept.joined(separator: "\n") + "\n").write(toFile: dump, atomically: true, encoding: .utf8)
            let added = (0..<records).map { #"{"id":"\#(key(2_000 + $0))","v":-1}"# }
            let next = directory.appendingPathComponent("next.jsonl").path
            try ((kept + added).joined(separator: "\n") + "\n").write(toFile: next, atomically: true, encoding: .utf8)
            let store = directory.appendingPathComponent("change.sqlite").path
            let zeroConfig = ["import", "--into", store, "--entity", "E", "--key", "id", "--format", "jsonl"]
            let first = try runCommand(sluice, zeroConfig + [dump])
            #expect(first.status == 0, "\(first.stderr)")
            let (status, peakKiB) = try runMeasured(
                sluice, zeroConfig + ["--stats-json", stats(store), next], inputPath: "/dev/null")
            #expect(status == 0)
            #expect(StoreReader(store).count("E") == 2_000 + records)
            #expect(try unchangedRecords(store) == 2_000, "\(records) new")
            let again = try runCommand(sluice, zeroConfig + ["--stats-json", stats(store), next])
            #expect(again.status == 0, "\(again.stderr)")
            #expect(try unchangedRecords(store) == 2_000 + records)
            return peakKiB
        }
        let few = try change(records: 100_000)
        let many = try change(records: 300_000)
        print("a change beside kept records: 100,000 new peak \(few) KiB, 300,000 new peak \(many) KiB")
        #expect(many < few + 12 * 1024, "100,000 new: \(few) KiB, 300,000 new: \(many) KiB")
    }
}
