/// Checks that inputs are well-formed without writing anything.
public enum Checker {
    /// What a check read.
    public struct Report: Sendable, Equatable {
        /// Bytes parsed (decompressed).
        public var bytes: Int64
    }

    /// Parses `path` (`-` for standard input) completely. `format` defaults
    /// to the name's extension, then to the first non-blank byte. O(input),
    /// memory O(chunk).
    ///
    /// - Throws: ``ImportError/input(_:)`` or ``ImportError/parse(_:)`` with
    ///   the location of the first problem.
    public static func check(path: String, format: InputFormat? = nil, chunkSize: Int = Input.defaultChunkSize) throws(ImportError) -> Report {
        let source: ByteSource
        do { source = try Input.open(path: path, chunkSize: chunkSize) } catch { throw .input(error) }
        let chunk = UnsafeMutableRawBufferPointer.allocate(byteCount: max(chunkSize, 1), alignment: 16)
        defer { chunk.deallocate() }
        let sink = DiscardingSink()
        let assembler = RecordAssembler(routes: [], sink: sink)
        let compressed = source.compression != .none
        var xml: XMLPushParser?
        var json: JSONPushParser?
        var bytes: Int64 = 0
        func start(_ format: InputFormat) {
            if format == .xml {
                xml = XMLPushParser(handler: assembler, name: path, decompressed: compressed)
            } else {
                json = JSONPushParser(handler: assembler, name: path, multipleValues: format == .jsonl, decompressed: compressed)
            }
        }
        if let known = format ?? InputFormat.guess(fromName: path) { start(known) }
        while true {
                let count: Int
                do { count = try source.read(into: chunk) } catch { throw ImportError.input(error) }
                if count == 0 { break }
                let piece = UnsafeRawBufferPointer(rebasing: chunk[..<count])
                if xml == nil && json == nil {
                    start(piece.first { ![0x20, 0x09, 0x0A, 0x0D, 0xEF, 0xBB, 0xBF].contains($0) } == UInt8(ascii: "<") ? .xml : .jsonl)
                }
                do { if let xml { try xml.feed(piece) } else { try json?.feed(piece) } } catch { throw ImportError.parse(error) }
                bytes += Int64(count)
            }
        if xml == nil && json == nil { start(.json) }
        do { if let xml { try xml.finish() } else { try json?.finish() } } catch { throw ImportError.parse(error) }
        return Report(bytes: bytes)
    }
}

/// A sink for checks: there are no record paths, so it is never called.
private final class DiscardingSink: RecordSink {
    func record(_ tree: RecordTree, entities: [Int], ordinal: Int) throws {}
}
