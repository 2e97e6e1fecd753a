/// Why bytes could not be read from an input.
///
/// Every case names the input (a path, or `-` for standard input) so that a
/// message is useful on its own.
public enum InputError: Error, Equatable, Sendable, CustomStringConvertible {
    /// The path does not exist.
    case notFound(path: String)
    /// The operating system refused to open or read the input.
    case unreadable(path: String, reason: String)
    /// A compressed stream is damaged at `offset` (bytes of the compressed file);
    /// `format` names its compression (`gzip`, `bzip2`, `zstd` or `xz`).
    case corrupt(path: String, format: String, offset: Int64, reason: String)
    /// A compressed stream ended before its end marker, at `offset` bytes of the
    /// compressed file: the file was cut short. `format` names its compression.
    case truncated(path: String, format: String, offset: Int64)

    /// The input the error is about.
    public var path: String {
        switch self {
        case .notFound(let path), .unreadable(let path, _), .corrupt(let path, _, _, _), .truncated(let path, _, _):
            return path
        }
    }

    public var description: String {
        switch self {
        case .notFound(let path):
            return "\(path): no such file"
        case .unreadable(let path, let reason):
            return "\(path): cannot read: \(reason)"
        case .corrupt(let path, let format, let offset, let reason):
            return "\(path): corrupt \(format) stream at compressed byte \(offset): \(reason)"
        case .truncated(let path, let format, let offset):
            return "\(path): \(format) stream is truncated: it ends at compressed byte \(offset) before its end marker"
        }
    }
}
