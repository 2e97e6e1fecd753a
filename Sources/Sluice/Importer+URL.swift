#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// File URLs wherever a path goes: the store and the inputs.
extension Importer {
    /// An importer for `mapping` into the store at the file URL `store`; see
    /// ``init(mapping:store:options:hooks:)``.
    ///
    /// - Throws: ``ImportError/usage(_:)`` for a URL that is not a file URL.
    public init(
        mapping: Mapping, store: URL, options: ImportOptions = ImportOptions(), hooks: [String: EntityHooks] = [:]
    ) throws(ImportError) {
        try self.init(mapping: mapping, store: try Self.path(of: store), options: options, hooks: hooks)
    }

    /// Imports the files at `inputs`; see ``run(inputs:progress:)``.
    public func run(
        inputs: [URL], progress: (@Sendable (ImportProgress) -> Void)? = nil
    ) async throws(ImportError) -> ImportReport {
        var paths: [String] = []
        for url in inputs { paths.append(try Self.path(of: url)) }
        return try await run(inputs: paths, progress: progress)
    }

    /// Progress, then the report, of importing the files at `inputs`; see
    /// ``events(inputs:)-([String])``.
    public func events(inputs: [URL]) throws(ImportError) -> ImportEvents {
        var paths: [String] = []
        for url in inputs { paths.append(try Self.path(of: url)) }
        return events(inputs: paths)
    }

    private static func path(of url: URL) throws(ImportError) -> String {
        guard url.isFileURL else { throw .usage("\(url): not a file URL; sluice reads files and standard input") }
        return url.path
    }
}
