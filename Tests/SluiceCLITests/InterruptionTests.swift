import Foundation
import SluiceTestSupport
import Testing

/// SIGINT and SIGTERM in each phase: the run stops, rolls back its open
/// transaction, says so in one line, records `cancelled` and exits 130 or
/// 143; a resume then ends in the uninterrupted store. Before the fix the
/// signal killed the process silently (ledger left `running`), and the
/// library ignored cancellation once the input had been read.
@Suite(.serialized) struct InterruptionTests {
    let crash = SyncCrashTests()

    enum Phase: String, CaseIterable { case reading, applying, sweeping }

    @Test(arguments: Phase.allCases) func aSignalStopsTheRunAndResumeFinishesIt(phase: Phase) throws {
        let directory = TestPaths.temporaryDirectory()
        let base = directory.appendingPathComponent("base.sqlite").path
        #expect(
            try runCommand(sluice, ["import", "--mapping", crash.mapping, "--into", base, SyncCrashTests.all]).status
                == 0)
        let input = phase == .sweeping ? SyncCrashTests.third : SyncCrashTests.all
        let arguments = ["import", "--mapping", crash.mapping, "--delete-missing", input]
        let reference = directory.appendingPathComponent("reference.sqlite").path
        if phase == .sweeping { try FileManager.default.copyItem(atPath: base, toPath: reference) }
        #expect(try runCommand(sluice, arguments + ["--into", reference]).status == 0)
        let expected = crash.dump(reference)

        for (attempt, number) in [SIGINT, SIGTERM].enumerated() {
            let store = directory.appendingPathComponent("stopped\(attempt).sqlite").path
            if phase == .sweeping { try FileManager.default.copyItem(atPath: base, toPath: store) }
            let process = Process()
            process.executableURL = URL(fileURLWithPath: sluice)
            process.arguments = arguments + ["--into", store]
            let errors = Pipe()
            process.standardOutput = FileHandle.nullDevice
            process.standardError = errors
            try process.run()
            let deadline = Date().addingTimeInterval(60)
            while process.isRunning && Date() < deadline {
                let events = StoreReader(store).count("Event")
                let ready: Bool
                switch phase {
                case .reading: ready = Date() > deadline.addingTimeInterval(-59.8)
                case .applying: ready = events > 0
                case .sweeping: ready = events > 0 && events < 60_000
                }
                if ready { break }
                usleep(1_000)
            }
            #expect(process.isRunning, "\(phase): the run ended before the signal")
            kill(process.processIdentifier, number)
            process.waitUntilExit()
            let message = String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
            #expect(process.terminationReason == .exit, "\(phase)")
            #expect(process.terminationStatus == 128 + number, "\(phase): \(message)")
            #expect(
                message.contains("stopped by \(number == SIGINT ? "SIGINT" : "SIGTERM")")
                    && message.contains("--resume"), "\(phase): \(message)")
            #expect(crash.statuses(store).last == "cancelled", "\(phase): \(crash.statuses(store))")
            let resumed = try runCommand(sluice, arguments + ["--into", store, "--resume"])
            #expect(resumed.status == 0, "\(phase): \(resumed.stderr)")
            #expect(crash.dump(store) == expected, "\(phase): the resumed store differs")
        }
    }
}
