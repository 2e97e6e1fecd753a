import Foundation
import Sluice
import Testing

/// Issue 29, point 1: a cancellation ends only once the run has stopped,
/// recorded itself and released the store, whichever way it is asked for.
@Suite struct CancellationTests {
    /// Leaving the loop in the applying phase: the run is over when the loop
    /// is (before, it went on writing and the ledger said `running`).
    @Test func leavingTheLoopWhileApplyingStopsTheRunFirst() async throws {
        let directory = temporaryDirectory()
        let store = directory.appendingPathComponent("s.sqlite").path
        let input = try events((1...40_000).reversed(), in: directory)
        for try await event in try importer(store).events(inputs: [input]) {
            if case .progress(let progress) = event, progress.phase == .applying, progress.rowsApplied > 0 { break }
        }
        #expect(try lastRun(store) == .cancelled)
        let kept = try rows(store)
        #expect(kept < 40_000)
        try await Task.sleep(nanoseconds: 300_000_000)
        #expect(try rows(store) == kept)
        // The store is free: the next run resumes at once.
        let resumed = try importer(store, resume: true).runBlocking(inputs: [input])
        #expect(resumed[entity: "Event"].map { $0.inserted + $0.unchanged } == 40_000)
    }

    /// Cancelling the task: the loop throws `ImportError.cancelled` (before,
    /// it ended as if the run had completed), once the run has stopped.
    @Test func cancellingTheTaskThrowsCancelled() async throws {
        let directory = temporaryDirectory()
        let store = directory.appendingPathComponent("s.sqlite").path
        let input = try events((1...40_000).reversed(), in: directory)
        let applying = Signal()
        let task = Task {
            var finished = false
            for try await event in try importer(store).events(inputs: [input]) {
                if case .progress(let progress) = event, progress.phase == .applying { applying.raise() }
                if case .finished = event { finished = true }
            }
            return finished
        }
        while !applying.isRaised { try await Task.sleep(nanoseconds: 1_000_000) }
        task.cancel()
        let result = await task.result
        guard case .failure(let error) = result, case .cancelled = error as? ImportError else {
            Issue.record("the loop ended with \(result)")
            return
        }
        #expect(try lastRun(store) == .cancelled)
    }

    /// `ImportCancellation.cancel()` from another thread returns once the
    /// run is recorded as cancelled; from a progress callback it does not
    /// wait for itself.
    @Test func cancelReturnsOnceTheRunStoppedAndNeverDeadlocks() throws {
        let directory = temporaryDirectory()
        let store = directory.appendingPathComponent("s.sqlite").path
        let input = try events((1...40_000).reversed(), in: directory)
        let cancellation = ImportCancellation()
        let applying = Signal()
        let seen = Box<RunStatus?>(nil)
        let canceller = Thread {
            applying.wait()
            cancellation.cancel()
            // Read at once: the run must be over.
            seen.value = try? lastRun(store)
        }
        canceller.start()
        #expect(throws: ImportError.self) {
            try importer(store).runBlocking(
                inputs: [input],
                progress: { progress in
                    guard progress.phase == .applying else { return }
                    applying.raise()
                    // The store thread lingers: a cancel that did not wait reads `running`.
                    Thread.sleep(forTimeInterval: 0.05)
                }, cancellation: cancellation)
        }
        while canceller.isExecuting || !canceller.isFinished { Thread.sleep(forTimeInterval: 0.01) }
        #expect(seen.value == .cancelled)

        let inside = ImportCancellation()
        let again = directory.appendingPathComponent("again.sqlite").path
        #expect {
            try importer(again).runBlocking(
                inputs: [input], progress: { _ in inside.cancel() }, cancellation: inside)
        } throws: { error in
            if case .cancelled = error as? ImportError { return true }
            return false
        }
        #expect(try lastRun(again) == .cancelled)
    }

    /// `PushImport.cancel()` from another task while nothing is pushed ends
    /// the run and releases the store; a push after it throws `cancelled`.
    @Test func pushCancelEndsTheRun() async throws {
        let directory = temporaryDirectory()
        let store = directory.appendingPathComponent("s.sqlite").path
        let push = try importer(store, order: .input).startPush(name: "feed", format: .jsonl)
        try push.push(Array("{\"id\": 1, \"name\": \"one\"}\n".utf8))
        await Task.detached { push.cancel() }.value
        #expect(try lastRun(store) == .cancelled)
        #expect {
            try push.push(Array("{\"id\": 2, \"name\": \"two\"}\n".utf8))
        } throws: { error in
            if case .cancelled = error as? ImportError { return true }
            return false
        }
    }
}
