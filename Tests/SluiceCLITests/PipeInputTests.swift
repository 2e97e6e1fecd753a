import Foundation
import SluiceTestSupport
import Testing

/// Inputs that are pipes (a shell's `<(zcat …)`, a named pipe) are read as
/// streams: nothing is read from them before the import reads them.
@Suite struct PipeInputTests {
    @Test func aNamedPipeImportsEveryRecord() throws {
        let directory = TestPaths.temporaryDirectory()
        let fifo = directory.appendingPathComponent("events.json").path
        #expect(mkfifo(fifo, 0o600) == 0)
        let text = ReportingTests.events(3_000)
        let writer = Thread {
            let handle = FileHandle(forWritingAtPath: fifo)
            handle?.write(Data(text.utf8))
            try? handle?.close()
        }
        writer.start()
        let mapping = directory.appendingPathComponent("m.yml").path
        try ReportingTests.mapping.write(toFile: mapping, atomically: true, encoding: .utf8)
        let store = directory.appendingPathComponent("s.sqlite").path
        let result = try runCommand(
            sluice, ["import", "--format", "jsonl", "--mapping", mapping, "--into", store, fifo])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(StoreReader(store).count("Event") == 3_000)
    }
}
