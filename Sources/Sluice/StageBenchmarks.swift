import Foundation
@_spi(Machinery) import SluiceRecords

/// The import's stages one at a time, for the benchmarks package only
/// (`@_spi(Benchmarks) import Sluice`): record assembly and mapping without
/// a store, the key-ordered sort and merge, and the store's batch apply.
/// Not API; it changes whenever the machinery does.
@_spi(Benchmarks)
public final class StageBenchmarks {
    private let compiled: CompiledMapping
    private var groups: [BatchGroup] = []

    /// Stages for `mapping`.
    public init(mapping: Mapping) throws(ImportError) {
        do { compiled = try CompiledMapping(mapping) } catch { throw .mapping(error) }
    }

    /// Parses the JSON Lines file at `path` in 64 KiB chunks through the
    /// record assembler and the batcher, keeps the batch groups cut for the
    /// other stages and returns how many there are. A group is cut after
    /// the chunk that fills it (the import cuts after the record that does).
    public func assemble(jsonLines path: String) throws -> Int {
        let batcher = Batcher(compiled, limits: BatchLimits())
        var cut: [BatchGroup] = []
        let assembler = RecordAssembler(routes: compiled.routes, sink: batcher)
        let parser = JSONPushParser(handler: assembler, name: path, multipleValues: true)
        func cutGroup() {
            let records = assembler.recordCount
            cut.append(
                batcher.cut(
                    checkpoint: Checkpoint(input: path, records: records, bytes: 0), rawBytes: 0, records: records))
        }
        let bytes = try Data(contentsOf: URL(fileURLWithPath: path))
        try bytes.withUnsafeBytes { raw in
            var start = 0
            while start < raw.count {
                let end = min(raw.count, start + (64 << 10))
                try parser.feed(UnsafeRawBufferPointer(rebasing: raw[start..<end]))
                if batcher.isFull { cutGroup() }
                start = end
            }
        }
        try parser.finish()
        if !batcher.isEmpty { cutGroup() }
        groups = cut
        return cut.count
    }

    /// Spills the assembled groups into sorted runs in `directory` and
    /// merges them back in key order; returns the rows merged.
    public func sortAndMerge(directory: String) throws -> Int {
        let sorter = KeyOrderSorter(directory: directory, options: SortOptions())
        for group in groups { try sorter.add(group) }
        var rows = 0
        for name in sorter.applyOrder {
            guard let chunks = try sorter.chunks(of: name, rows: 5_000) else { continue }
            while let batch = try chunks.next() { rows += batch.rows.rowCount }
        }
        return rows
    }

    /// A new store at `path`, read as `--into` reads it (a file path is a
    /// SQLite store), with the mapping's tables, ready for
    /// ``apply(to:)`` (kept apart so that a benchmark can leave it out of
    /// its measurement).
    public func prepareStore(at path: String) throws -> StoreHandle {
        let store = try StoreTarget(path).open(options: StoreOptions())
        try store.prepare(compiled.mappers.map(\.schema), links: compiled.links)
        return StoreHandle(store: store)
    }

    /// Applies the assembled groups to `store` in input order, a transaction
    /// each; returns the rows inserted.
    public func apply(to store: StoreHandle) throws -> Int {
        var inserted = 0
        for group in groups {
            for counts in try store.store.apply(group).values { inserted += counts.inserted }
        }
        return inserted
    }

    /// A store opened by ``prepareStore(at:)``.
    public final class StoreHandle {
        fileprivate let store: any ImportStore

        fileprivate init(store: any ImportStore) { self.store = store }
    }
}
