import Foundation
import SluiceTestSupport
import Testing

/// Kills `sluice import` with SIGKILL at random moments, resumes it, and
/// checks the store is intact and equal to an uninterrupted import.
@Suite(.serialized) struct CrashResumeTests {
    let mapping = TestPaths.file(
        "events.yml",
        """
        entities:
          Event:
            records: $
            key: id
            attributes: {id: integer, kind: string, score: integer, actor_id: {type: integer, source: actor.id}, text: string}
          Actor:
            records: $
            key: id
            attributes: {id: {type: integer, source: actor.id}, login: {source: actor.login}, seen: {type: integer, source: id}}
        """)

    /// 30,000 records, keys shuffled and repeated (the last occurrence wins).
    let input: String = {
        var lines: [String] = []
        var state: UInt64 = 42
        for index in 0..<30_000 {
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            let id = Int(state >> 33) % 20_000
            let actor = id % 700
            lines.append(
                #"{"id": \#(id), "kind": "k\#(index % 7)", "score": \#(index), "actor": {"id": \#(actor), "login": "a\#(actor)"}, "text": "record \#(index) of the crash test"}"#
            )
        }
        return TestPaths.file("events.jsonl", lines.joined(separator: "\n") + "\n")
    }()

    func arguments(_ store: String, resume: Bool, order: String = "key") -> [String] {
        ["import", "--mapping", mapping, "--into", store, "--batch-rows", "300", "--order", order, input]
            + (resume ? ["--resume"] : [])
    }

    func dump(_ store: String) -> [[[String?]]] {
        let reader = StoreReader(store)
        return [reader.rows("SELECT * FROM Event ORDER BY id"), reader.rows("SELECT * FROM Actor ORDER BY id")]
    }

    /// In input order a resume continues after the last committed batch; in
    /// key order it applies every row again over what the killed run's
    /// merge had committed. Both must end in the uninterrupted store.
    @Test(arguments: ["input", "key"]) func killedAtTwentyRandomPointsResumesToTheSameStore(order: String) throws {
        let reference = TestPaths.temporaryDirectory().appendingPathComponent("reference-\(order).sqlite").path
        let started = Date()
        let clean = try runCommand(sluice, arguments(reference, resume: false, order: order))
        // Kill points spread over the whole run: parse, spill, merge, apply.
        let duration = UInt32(Date().timeIntervalSince(started) * 1_000_000)
        #expect(clean.status == 0, "\(clean.stderr)")
        let expected = dump(reference)
        #expect(expected[0].count > 10_000)

        var generator = SystemRandomNumberGenerator()
        var interrupted = 0
        var interruptedWhileApplying = 0
        for attempt in 0..<22 {
            let store = TestPaths.temporaryDirectory().appendingPathComponent("crash-\(order)\(attempt).sqlite").path
            let process = Process()
            process.executableURL = URL(fileURLWithPath: sluice)
            process.arguments = arguments(store, resume: false, order: order)
            process.standardOutput = FileHandle.nullDevice
            process.standardError = FileHandle.nullDevice
            try process.run()
            if attempt % 4 == 0 {
                // Wait for the first commit, so some kills land mid-apply.
                let deadline = Date().addingTimeInterval(30)
                while process.isRunning && Date() < deadline && StoreReader(store).count("Event") <= 0 { usleep(2_000) }
            } else {
                usleep(UInt32.random(in: (duration / 50)...(duration * 7 / 10), using: &generator))
            }
            if process.isRunning {
                kill(process.processIdentifier, SIGKILL)
                interrupted += 1
            }
            process.waitUntilExit()
            if process.terminationReason == .uncaughtSignal && StoreReader(store).count("Event") > 0 {
                interruptedWhileApplying += 1
            }

            let resumed = try runCommand(sluice, arguments(store, resume: true, order: order))
            #expect(resumed.status == 0, "attempt \(attempt): \(resumed.stderr)")
            let reader = StoreReader(store)
            #expect(reader.value("PRAGMA integrity_check") == "ok", "attempt \(attempt)")
            #expect(dump(store) == expected, "attempt \(attempt): the resumed store differs")
            let statuses = reader.rows("SELECT status FROM _sluice_runs ORDER BY id").map { $0[0] ?? "" }
            #expect(statuses.last == "completed", "attempt \(attempt): \(statuses)")
            if process.terminationReason == .uncaughtSignal {
                #expect(
                    statuses.dropLast().allSatisfy { $0 == "interrupted" || $0 == "completed" },
                    "attempt \(attempt): \(statuses)")
            }
        }
        #expect(interrupted >= 18, "only \(interrupted) runs were killed before they finished")
        #expect(interruptedWhileApplying >= 1, "no run was killed after it had committed rows")
    }

    /// Standard input in input order: checkpoints carry the stream's prefix,
    /// which a resume must repeat. (In key order nothing is committed before
    /// the stream has been read, so a resume simply reads it all again.)
    @Test func killedWhileReadingStandardInputResumesFromTheSameStream() throws {
        let reference = TestPaths.temporaryDirectory().appendingPathComponent("stdin-reference.sqlite").path
        let started = Date()
        #expect(try runCommand(sluice, arguments(reference, resume: false, order: "input")).status == 0)
        // Kills at a twelfth to a half of an uninterrupted run: fixed delays
        // of 0.15 to 0.75 s outlasted the release binary's whole run.
        let duration = Date().timeIntervalSince(started)
        let expected = dump(reference)
        let data = try Data(contentsOf: URL(fileURLWithPath: input))
        func runReadingStandardInput(_ arguments: [String], from path: String) throws -> (status: Int32, stderr: String)
        {
            let process = Process()
            process.executableURL = URL(fileURLWithPath: sluice)
            process.arguments = arguments
            process.standardInput = FileHandle(forReadingAtPath: path)
            process.standardOutput = FileHandle.nullDevice
            let errors = TestPaths.temporaryDirectory().appendingPathComponent("stderr.txt").path
            _ = FileManager.default.createFile(atPath: errors, contents: nil)
            process.standardError = FileHandle(forWritingAtPath: errors)
            try process.run()
            process.waitUntilExit()
            return (process.terminationStatus, (try? String(contentsOfFile: errors, encoding: .utf8)) ?? "")
        }
        func stdinArguments(_ store: String, resume: Bool) -> [String] {
            [
                "import", "--mapping", mapping, "--into", store, "--batch-rows", "300", "--order", "input", "--format",
                "jsonl", "-",
            ]
                + (resume ? ["--resume"] : [])
        }
        var interrupted = 0
        var refusalChecked = false
        for attempt in 0..<6 {
            let store = TestPaths.temporaryDirectory().appendingPathComponent("stdin-crash\(attempt).sqlite").path
            let process = Process()
            process.executableURL = URL(fileURLWithPath: sluice)
            process.arguments = stdinArguments(store, resume: false)
            process.standardInput = FileHandle(forReadingAtPath: input)
            process.standardOutput = FileHandle.nullDevice
            process.standardError = FileHandle.nullDevice
            try process.run()
            usleep(UInt32(duration * Double(attempt + 1) / 12 * 1_000_000))
            if process.isRunning {
                kill(process.processIdentifier, SIGKILL)
                interrupted += 1
            }
            process.waitUntilExit()
            let committed = StoreReader(store).count("Event")
            if !refusalChecked && committed > 0 {
                refusalChecked = true
                // A different stream is refused and changes nothing.
                var changed = data
                let text = try #require(changed.range(of: Data("crash test".utf8)))
                changed[text.lowerBound] = UInt8(ascii: "C")
                let changedFile = TestPaths.temporaryDirectory().appendingPathComponent("changed.jsonl").path
                try changed.write(to: URL(fileURLWithPath: changedFile))
                let refused = try runReadingStandardInput(stdinArguments(store, resume: true), from: changedFile)
                #expect(refused.status == 64, "\(refused.stderr)")
                #expect(refused.stderr.contains("differs from the stream of the interrupted run"), "\(refused.stderr)")
                #expect(StoreReader(store).count("Event") == committed)
            }
            let resumed = try runReadingStandardInput(stdinArguments(store, resume: true), from: input)
            #expect(resumed.status == 0, "attempt \(attempt): \(resumed.stderr)")
            #expect(StoreReader(store).value("PRAGMA integrity_check") == "ok")
            #expect(dump(store) == expected, "attempt \(attempt): the resumed store differs")
        }
        #expect(interrupted >= 4, "only \(interrupted) runs were killed before they finished")
        #expect(refusalChecked, "no killed run had committed a batch")
    }

    @Test func resumeRefusesAChangedInput() throws {
        let store = TestPaths.temporaryDirectory().appendingPathComponent("changed.sqlite").path
        let small = TestPaths.file("small.jsonl", "{\"id\": 1, \"actor\": {\"id\": 1, \"login\": \"a\"}}\n")
        #expect(try runCommand(sluice, ["import", "--mapping", mapping, "--into", store, small]).status == 0)
        try "{\"id\": 2, \"actor\": {\"id\": 2, \"login\": \"b\"}}\n".write(
            toFile: small, atomically: true, encoding: .utf8)
        let refused = try runCommand(sluice, ["import", "--mapping", mapping, "--into", store, "--resume", small])
        #expect(refused.status == 64)
        #expect(refused.stderr.contains("changed since the interrupted run"))
        // A refused resume is no run: it leaves no ledger row behind (one
        // stayed `running` for as long as a library's process lived).
        #expect(StoreReader(store).rows("SELECT status FROM _sluice_runs") == [["completed"]])
    }
}
