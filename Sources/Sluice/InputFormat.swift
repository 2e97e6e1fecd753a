/// The syntax of an input.
public enum InputFormat: String, Sendable, CaseIterable {
    /// One XML document.
    case xml
    /// One JSON value.
    case json
    /// JSON Lines: any number of JSON values separated by whitespace.
    case jsonl

    /// The format a file name implies, looking through a compression
    /// extension (`Posts.xml.bz2` is XML); `nil` when the name says nothing.
    public static func guess(fromName name: String) -> InputFormat? {
        var parts = name.lowercased().split(separator: "/").last.map { $0.split(separator: ".") } ?? []
        if let last = parts.last, ["gz", "bz2", "zst", "zstd", "xz"].contains(last) { parts.removeLast() }
        guard parts.count > 1, let ext = parts.last else { return nil }
        switch ext {
        case "xml", "osm", "osc": return .xml
        case "json", "geojson": return .json
        case "jsonl", "ndjson", "ldjson": return .jsonl
        default: return nil
        }
    }

    /// The format the first bytes of an input suggest: XML when the first
    /// character past white space and byte order marks is `<`, else JSON
    /// Lines (which also reads a single JSON value).
    public static func sniff(_ bytes: UnsafeRawBufferPointer) -> InputFormat {
        let first = bytes.first { ![0x20, 0x09, 0x0A, 0x0D, 0xEF, 0xBB, 0xBF, 0xFE, 0xFF, 0x00].contains($0) }
        return first == UInt8(ascii: "<") ? .xml : .jsonl
    }
}
