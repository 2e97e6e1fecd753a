import Foundation
import SluiceTestSupport
import Testing

@Suite struct DamagedInputTests {
    /// A cut .gz named only the compressed offset (issue 25): the error says
    /// too how far the decompressed input was parsed and in which record.
    @Test func aTruncatedGzipNamesTheRecordAndTheDecompressedOffset() throws {
        let data = try Data(contentsOf: URL(fileURLWithPath: TestPaths.corpus("osm/000466354.osc.gz")))
        let cut = TestPaths.temporaryDirectory().appendingPathComponent("cut.osc.gz").path
        _ = FileManager.default.createFile(atPath: cut, contents: data.prefix(30_000))
        // What gzip itself gets out of the same bytes, and the records begun in them.
        let unpacked = try runCommand("/bin/sh", ["-c", "gzip -dc '\(cut)' 2>/dev/null | wc -c"])
        let begun = try runCommand(
            "/bin/sh", ["-c", "gzip -dc '\(cut)' 2>/dev/null | grep -oE '<(node|way|relation)[ >]' | wc -l"])
        let (bytes, records) = (
            unpacked.stdout.trimmingCharacters(in: .whitespacesAndNewlines),
            begun.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        )
        #expect(bytes == "285224" && records == "910")
        let store = TestPaths.temporaryDirectory().appendingPathComponent("cut.sqlite").path
        let mapping = TestPaths.repository.appendingPathComponent("Examples/osmchange/mapping.yml").path
        let result = try runCommand(sluice, ["import", "--mapping", mapping, "--into", store, cut])
        #expect(result.status == 65)
        #expect(
            result.stderr.contains(
                "\(cut) (byte \(bytes) of the decompressed stream), record \(records): gzip stream is truncated: it ends at compressed byte 30000"
            ),
            "\(result.stderr)")
        let check = try runCommand(sluice, ["check", cut])
        #expect(
            check.status == 65
                && check.stderr.contains("\(cut) (byte \(bytes) of the decompressed stream): gzip stream is truncated"),
            "\(check.stderr)")
    }
}
