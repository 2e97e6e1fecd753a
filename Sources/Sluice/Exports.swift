// The public API of sluice is this module plus the value types of the stages
// it re-exports (mappings, schemas, locations, counts).
@_exported import SluiceBatching
@_exported import SluiceInput
@_exported import SluiceParsers
@_exported import SluiceRecords
@_exported import SluiceStore
