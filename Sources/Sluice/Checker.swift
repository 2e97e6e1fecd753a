/// Checks that inputs are well-formed without writing anything.
public enum Checker {
    /// What a check read.
    public struct Report: Sendable, Equatable {
        /// Bytes parsed (decompressed).
        public var bytes: Int64
    }

    /// Parses `path` (`-` for standard input) completely. `format` defaults
    /// to the name's extension, then to the first non-blank byte; `limits`
    /// bound nesting depth and token size. O(input), memory O(chunk).
    ///
    /// - Throws: ``ImportError/input(_:)`` or ``ImportError/parse(_:)`` with
    ///   the location of the first problem.
    public static func check(
        path: String, format: InputFormat? = nil, chunkSize: Int = ImportOptions.defaultChunkSize,
        limits: RecordLimits = RecordLimits()
    ) throws(ImportError) -> Report {
        let source: ByteSource
        do { source = try Input.open(path: path, chunkSize: chunkSize) } catch { throw .input(error) }
        let chunk = UnsafeMutableRawBufferPointer.allocate(byteCount: max(chunkSize, 1), alignment: 16)
        defer { chunk.deallocate() }
        let sink = DiscardingSink()
        let assembler = RecordAssembler(routes: [], sink: sink, limits: limits)
        var parser: DocumentParser?
        var bytes: Int64 = 0
        func start(_ format: InputFormat) -> DocumentParser {
            DocumentParser(
                format: format, handler: assembler, name: path, compressed: source.compression != .none,
                multipleValues: format == .jsonl, limits: limits)
        }
        if let known = format ?? InputFormat.detect(path: path) { parser = start(known) }
        while true {
            let count: Int
            do { count = try source.read(into: chunk) } catch {
                throw .damagedInput(error, decompressedBytes: bytes, record: nil)
            }
            if count == 0 { break }
            let piece = UnsafeRawBufferPointer(rebasing: chunk[..<count])
            if parser == nil {
                parser = start(InputFormat.sniff(piece))
            }
            do { try parser?.feed(piece) } catch { throw .parse(error) }
            bytes += Int64(count)
        }
        do { try (parser ?? start(.json)).finish() } catch { throw .parse(error) }
        withExtendedLifetime(sink) {}
        return Report(bytes: bytes)
    }
}

/// A sink for checks: there are no record paths, so it is never called.
private final class DiscardingSink: RecordSink {
    func record(_ tree: RecordTree, entities: [Int], deleting: [Int], ordinal: Int) throws {}
}
