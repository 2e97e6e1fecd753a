import Foundation
import Sluice

// An app that knows sluice only through `import Sluice`: it names every
// public type of the library (the surface listed in the DocC catalog's
// topics), then imports three events into a store in the directory it is
// given and prints what the report and the store's status say.

/// The public surface: each type an app may name. A type the library stops
/// offering fails this build.
let surface: [Any.Type] = [
    // Importing
    Importer.self, ImportOptions.self, DeleteLimit.self, ImportCancellation.self, PushImport.self,
    InputFormat.self, ApplyOrder.self, BatchLimits.self, SortOptions.self, StoreOptions.self, RecordLimits.self,
    // Watching a run and its results
    ImportEvent.self, ImportEvents.self, ImportEvents.Iterator.self, ImportProgress.self, ImportProgress.Phase.self,
    ImportReport.self, ImportReport.Entity.self, TableReport.self, TableReport.Kind.self, EntityCounts.self,
    // The mapping
    Mapping.self, EntityMapping.self, AttributeMapping.self, RelationshipMapping.self, FilterCondition.self,
    FilterCondition.Test.self, TargetChoice.self, AttributeType.self, EpochUnit.self, WriteMode.self,
    MissingKeyPolicy.self, InvalidValuePolicy.self, MissingTargetPolicy.self, LinkRule.self, KeylessRule.self,
    // Hooks
    EntityHooks.self, RecordView.self, RowView.self, RawValue.self, RawValue.Kind.self, StoredValue.self,
    // Other tools and the store's status
    Checker.self, Checker.Report.self, Inferrer.self, Status.self, StoreStatus.self, RunRecord.self, RunStatus.self,
    TableRows.self, InputCheckpoint.self, DigestStatus.self,
    // Errors and what they carry
    ImportError.self, InputError.self, ParseError.self, ParseError.Reason.self, SourceLocation.self,
    MappingError.self, MappingError.Problem.self, RecordError.self, LimitError.self, StoreError.self,
    StoreError.Cause.self, SpillError.self,
]

guard CommandLine.arguments.count == 2 else {
    FileHandle.standardError.write(Data("usage: App DIRECTORY\n".utf8))
    exit(64)
}
let directory = URL(fileURLWithPath: CommandLine.arguments[1], isDirectory: true)
let input = directory.appendingPathComponent("events.jsonl")
try Data("{\"id\": 1}\n{\"id\": 2}\n{\"id\": 3}\n".utf8).write(to: input)
let store = directory.appendingPathComponent("events.sqlite").path
let mapping = try Mapping.parse(yaml: "entities: {Event: {records: $, key: id, attributes: {id: integer}}}")
let report = try Importer(mapping: mapping, store: store).runBlocking(inputs: [input.path])
let status = try Status.read(store: store)
let inserted = report[entity: "Event"]?.inserted ?? 0
print("\(surface.count) public types; inserted \(inserted); last run \(status.runs.first?.status.rawValue ?? "none")")
