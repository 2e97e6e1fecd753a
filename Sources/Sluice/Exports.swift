// The public API of sluice is this module plus the public types of the stages
// it re-exports: the mapping and its parts, hooks, options, limits, errors and
// what they carry, counts and the store's status. A stage keeps everything
// else `package` (or `@_spi`), so these re-exports carry no machinery into an
// app's namespace; Sluice.docc/Sluice.md lists the whole surface, and
// AppPackageTests builds an app's package against it.
@_exported import SluiceBatching
@_exported import SluiceInput
@_exported import SluiceParsers
@_exported import SluiceRecords
@_exported import SluiceStore
