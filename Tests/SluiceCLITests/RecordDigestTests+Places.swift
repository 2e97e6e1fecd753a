import Foundation
import SluiceTestSupport
import Testing

/// A run that skips reads the selected units of a file from their places
/// (docs/record-digests.md, "A run that skips"): after the hash pass, its
/// probe and its parse read only the new and changed records' bytes, not
/// the whole file twice more, and still leave what a full run leaves and
/// fail where it fails.
extension RecordDigestTests {
    /// Event `id` with `pad` bytes of a field the mapping ignores, over three
    /// lines (a unit that spans lines), so that the input is much larger than
    /// the store.
    static func paddedEvent(_ id: Int, score: Int? = nil, pad: Int = 2_000) -> String {
        let line = event(id, score: score)
        return String(line.dropLast()) + ",\n  \"pad\": \"" + String(repeating: "x", count: pad) + "\"\n}"
    }

    /// The next day's dump with `--delete-missing`: its 40 new and changed
    /// records of 3,000 are probed and parsed from their places, so the run
    /// reads the file about once (the hash pass), where it read it three
    /// times (hash pass, probe, parse); the store ends as a full run leaves
    /// it, with the same deletions. On one thread and on two: a run with
    /// parse threads parses the selected units it reads at their places on
    /// its one parse thread, where it read the whole file again for them.
    @Test(arguments: [1, 2]) func aNextDayReadsItsFileOnce(threads: Int) throws {
        let day0 = file((1...3_000).map { Self.paddedEvent($0) })
        var day1 = (1...3_000).filter { $0 % 150 != 0 }.map { Self.paddedEvent($0, score: $0 % 100 == 0 ? -$0 : nil) }
        day1 += (3_001...3_020).map { Self.paddedEvent($0) }
        let next = file(day1)
        let size = try #require(try FileManager.default.attributesOfItem(atPath: next)[.size] as? Int)
        let (skipping, parsing) = (try store(.sqlite), try store(.sqlite))
        _ = try run(skipping, [day0])
        _ = try run(parsing, ["--no-skip", day0])
        let measured = try bytesRead(
            [
                "import", "--mapping", Self.mapping, "--into", skipping, "--stats-json", stats(skipping),
                "--threads", "\(threads)", "--delete-missing", next,
            ])
        #expect(measured.status == 0)
        // 20 gone (multiples of 150), 20 changed (multiples of 100 but not of 300).
        #expect(try unchangedRecords(skipping) == 3_000 - 20 - 20)
        // The hash pass reads the file once; the store and the changed units add little
        // (1.4 times the file's size where three passes read 3.3 times).
        #expect(measured.read > size && measured.read < size * 2, "read \(measured.read) of \(size)")
        _ = try run(parsing, ["--no-skip", "--delete-missing", next])
        #expect(rows(skipping) == rows(parsing))
        #expect(try deleted(skipping) == deleted(parsing))
    }

    /// A changed record that does not parse, in a file read at its places:
    /// the run fails with the message (file, line, column, record number)
    /// and exit status of a full run of the same file on a copy of the store,
    /// on one thread and on two.
    @Test(arguments: [1, 2]) func aBrokenRecordReadAtItsPlaceFailsAsAFullRunFails(threads: Int) throws {
        let target = try store(.sqlite)
        var lines = (1...400).map { Self.paddedEvent($0, pad: 300) }
        _ = try run(target, [file(lines)])
        lines[211] = Self.paddedEvent(212, pad: 300).replacingOccurrences(of: "\"score\": 424", with: "\"score\": }")
        lines[300] = Self.paddedEvent(301, score: 7, pad: 300)
        let broken = file(lines)
        let copy = target + ".copy"
        try FileManager.default.copyItem(atPath: target, toPath: copy)
        let skipping = try runCommand(
            sluice,
            [
                "import", "--mapping", Self.mapping, "--into", target, "--threads", "\(threads)", "--delete-missing",
                broken,
            ])
        let full = try runCommand(
            sluice, ["import", "--mapping", Self.mapping, "--into", copy, "--no-skip", "--delete-missing", broken])
        #expect(skipping.status != 0 && skipping.status == full.status)
        #expect(skipping.stderr.contains("\(broken):\(211 * 3 + 1):"), "\(skipping.stderr)")
        #expect(skipping.stderr.contains("record 212"), "\(skipping.stderr)")
        let message = { (stderr: String) in stderr.split(separator: "\n").filter { $0.contains(broken) } }
        #expect(message(skipping.stderr) == message(full.stderr), "\(skipping.stderr)\n\(full.stderr)")
    }
}
