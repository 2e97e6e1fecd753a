import Foundation
import Sluice
import Testing

/// Issue 29, point 4: the types a Swift user expects.
@Suite struct TypeTests {
    /// A run's status is an enum whose raw values are the ledger's (and the
    /// CLI's) words; a report's entities and a status's tables and
    /// checkpoints are named structs.
    @Test func statusesAndEntitiesAreNamedTypes() throws {
        let directory = temporaryDirectory()
        let store = directory.appendingPathComponent("s.sqlite").path
        let input = try events(1...3, in: directory)
        let report = try importer(store, order: .input).runBlocking(inputs: [input])
        let entity: ImportReport.Entity = try #require(report.entities.first)
        #expect(entity.name == "Event" && entity.counts.inserted == 3)
        let status = try Status.read(store: store)
        let run: RunRecord = try #require(status.runs.first)
        switch run.status {
        case .completed: break
        case .running, .failed, .cancelled, .interrupted: Issue.record("the run is \(run.status)")
        }
        #expect(RunStatus.allCases.map(\.rawValue) == ["running", "completed", "failed", "cancelled", "interrupted"])
        let table: TableRows = try #require(status.tables.first { $0.name == "Event" })
        #expect(table.rows == 3)
        let checkpoint: InputCheckpoint = try #require(status.checkpoints.first)
        #expect(checkpoint.input == input && checkpoint.records == 3)
    }

    /// `PushImport` is `Sendable`: pushed from one task, finished from another.
    @Test func aPushImportCrossesTasks() async throws {
        let store = temporaryDirectory().appendingPathComponent("s.sqlite").path
        let push: any Sendable & AnyObject = try importer(store, order: .input).startPush(name: "feed", format: .jsonl)
        let typed = try #require(push as? PushImport)
        try await Task.detached { try typed.push(Array("{\"id\": 1, \"name\": \"one\"}\n".utf8)) }.value
        let report = try await Task.detached { try typed.finish() }.value
        #expect(report[entity: "Event"]?.inserted == 1)
    }

    /// `rowsTotal` in key order: known once the input is read, never below
    /// the rows applied, and equal to them when the apply ends.
    @Test func rowsTotalSaysWhatItCounts() throws {
        let directory = temporaryDirectory()
        let store = directory.appendingPathComponent("s.sqlite").path
        // 2,000 records, 500 of them repeating a key: 1,500 rows to apply.
        let input = try events(Array(1...1_500) + Array(1...500), in: directory)
        let seen = Box<[ImportProgress]>([])
        _ = try importer(store).runBlocking(inputs: [input], progress: { seen.value.append($0) })
        let applying = seen.value.filter { $0.phase == .applying }
        #expect(seen.value.filter { $0.phase == .reading }.allSatisfy { $0.rowsTotal == nil })
        #expect(applying.allSatisfy { ($0.rowsTotal ?? 0) >= $0.rowsApplied })
        #expect(applying.first?.rowsTotal == 2_000)
        let done = try #require(seen.value.last { $0.phase == .done })
        #expect(done.rowsTotal == 1_500 && done.rowsApplied == 1_500)
    }
}
