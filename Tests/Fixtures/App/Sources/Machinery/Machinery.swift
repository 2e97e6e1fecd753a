import Sluice

/// Machinery an app must not see through `import Sluice`: input sources and
/// decoders, parsers, the record assembler, the batcher and sorter, row
/// arenas and cells, the stores and the pipeline. AppPackageTests expects
/// this target to fail to build, with "cannot find" for every name.
let machinery: [Any.Type] = [
    Compression.self, Input.self, ByteSource.self, DecompressingSource.self, XMLPushParser.self,
    JSONPushParser.self, RecordAssembler.self, CompiledMapping.self, Batcher.self, BatchGroup.self,
    KeyOrderSorter.self, RowArena.self, Cell.self, ImportStore.self, SQLiteStore.self, PostgresStore.self,
    StoreTarget.self, ImportPipeline.self,
]
