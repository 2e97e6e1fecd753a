/// Proposes a mapping for an input by reading a sample of it.
public enum Inferrer {
    /// The default sample: the first 64 MiB of (decompressed) input.
    public static let defaultSampleBytes = 64 << 20

    /// Reads up to `sampleBytes` of `path` and returns the mapping it
    /// suggests (see `MappingInference`). `format` defaults to the name's
    /// extension, then to the first byte. O(sample), memory O(distinct paths).
    ///
    /// - Throws: ``ImportError/input(_:)`` or ``ImportError/parse(_:)`` when
    ///   the sample is not readable or not well-formed.
    public static func infer(
        path: String, format: InputFormat? = nil, sampleBytes: Int = defaultSampleBytes,
        chunkSize: Int = ImportOptions.defaultChunkSize
    ) throws(ImportError) -> (mapping: Mapping, bytesRead: Int64) {
        let source: ByteSource
        do { source = try Input.open(path: path, chunkSize: chunkSize) } catch { throw .input(error) }
        let chunk = UnsafeMutableRawBufferPointer.allocate(byteCount: max(chunkSize, 1), alignment: 16)
        defer { chunk.deallocate() }
        let collector = MappingInference()
        var chosen = format ?? InputFormat.detect(path: path)
        var parser: DocumentParser?
        var bytes: Int64 = 0
        while bytes < Int64(sampleBytes) {
            let count: Int
            do { count = try source.read(into: chunk) } catch { throw .input(error) }
            if count == 0 { break }
            let piece = UnsafeRawBufferPointer(rebasing: chunk[..<count])
            if parser == nil {
                let detected = chosen ?? InputFormat.sniff(piece)
                chosen = detected
                parser = DocumentParser(
                    format: detected, handler: collector, name: path, compressed: source.compression != .none,
                    multipleValues: detected != .xml, limits: RecordLimits())
            }
            do { try parser?.feed(piece) } catch { throw .parse(error) }
            bytes += Int64(count)
        }
        if bytes < Int64(sampleBytes), let parser {
            do { try parser.finish() } catch { throw .parse(error) }
        }
        return (collector.proposal(for: chosen == .xml ? .xml : .json), bytes)
    }
}
