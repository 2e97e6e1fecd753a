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

    /// The format of the input at `path`: its name's, except that a name
    /// saying JSON whose first 64 KiB hold one value after another is JSON
    /// Lines (GH Archive's hourly `.json.gz` files are). `nil` when the name
    /// says nothing or the input is standard input. Reads at most 64 KiB.
    public static func detect(path: String) -> InputFormat? {
        guard path != "-", let named = guess(fromName: path) else { return nil }
        // Only a regular file can be looked into: reading a pipe would consume it.
        guard named == .json, Input.isRegularFile(path), let source = try? Input.open(path: path, chunkSize: 64 << 10)
        else {
            return named
        }
        let head = UnsafeMutableRawBufferPointer.allocate(byteCount: 64 << 10, alignment: 16)
        defer { head.deallocate() }
        var count = 0
        while count < head.count,
            let got = try? source.read(into: UnsafeMutableRawBufferPointer(rebasing: head[count...])), got > 0
        {
            count += got
        }
        return holdsSeveralValues(UnsafeRawBufferPointer(rebasing: head[..<count])) ? .jsonl : named
    }

    /// Whether `text` holds a complete first JSON value followed by the
    /// start of another (strings and escapes followed; a first value longer
    /// than `text` counts as one document). O(bytes).
    static func holdsSeveralValues(_ text: UnsafeRawBufferPointer) -> Bool {
        var depth = 0
        var inString = false
        var escaped = false
        var scalar = false
        // 0 before the first value, 1 inside it, 2 after it.
        var state = 0
        for byte in text {
            if inString {
                if escaped {
                    escaped = false
                } else if byte == 0x5C {
                    escaped = true
                } else if byte == 0x22 {
                    inString = false
                    if depth == 0 { state = 2 }
                }
                continue
            }
            let space = byte == 0x20 || byte == 0x09 || byte == 0x0A || byte == 0x0D
            switch state {
            case 0:
                // White space and a UTF-8 byte order mark may come first.
                if space || byte == 0xEF || byte == 0xBB || byte == 0xBF { continue }
                state = 1
                switch byte {
                case 0x22: inString = true
                case 0x7B, 0x5B: depth = 1
                default: scalar = true
                }
            case 1:
                if scalar {
                    if space { state = 2 }
                    continue
                }
                switch byte {
                case 0x22: inString = true
                case 0x7B, 0x5B: depth += 1
                case 0x7D, 0x5D:
                    depth -= 1
                    if depth == 0 { state = 2 }
                default: break
                }
            default:
                if !space { return true }
            }
        }
        return false
    }
}
