/// Why an import or check stopped. Committed batches stay in the store.
public enum ImportError: Error, CustomStringConvertible {
    /// An input could not be opened or read.
    case input(InputError)
    /// An input's compressed stream is damaged or cut short after
    /// `decompressedBytes` bytes of it were parsed, within or just after
    /// record `record` (`nil` for a check, which reads no records).
    case damagedInput(InputError, decompressedBytes: Int64, record: Int?)
    /// An input is malformed, a record could not be mapped, or a limit was hit.
    case parse(ParseError)
    /// The mapping is invalid (found before any input is read).
    case mapping(MappingError)
    /// The store failed.
    case store(StoreError)
    /// A temporary run file of the key-ordered apply failed (disk full…).
    case spill(SpillError)
    /// The caller cancelled; the batch in flight was rolled back.
    case cancelled
    /// The caller's source of an input's bytes (the sequence handed to
    /// ``Importer/run(name:format:chunks:progress:)``) threw the error
    /// given, while reading the input named first.
    case source(String, any Error)
    /// The request itself is wrong (no inputs, unknown format…).
    case usage(String)
    /// Relationships whose `missing: error` policy found links to records
    /// that are not in the store at the end of the run.
    case danglingReferences(String)
    /// Delete-missing would have deleted more from an entity than
    /// ``ImportOptions/maxDelete`` allows; nothing was deleted, and what the
    /// run inserted and updated is committed.
    case deletionLimit(String)

    public var description: String {
        switch self {
        case .input(let error): return "\(error)"
        case .damagedInput(let error, let bytes, let record):
            // Placed as a parse error is: `file (byte N of the decompressed stream), record N: …`.
            let reason = "\(error)".dropFirst(error.path.count + 2)
            return
                "\(error.path) (byte \(bytes) of the decompressed stream)\(record.map { ", record \($0)" } ?? ""): \(reason)"
        case .parse(let error): return "\(error)"
        case .mapping(let error): return "invalid mapping:\n\(error)"
        case .store(let error): return "store error: \(error)"
        case .spill(let error): return "sort run error: \(error)"
        case .cancelled: return "cancelled; batches committed before the cancellation are kept"
        case .source(let name, let error): return "\(name): the input's source failed: \(error)"
        case .usage(let message): return message
        case .danglingReferences(let message): return message
        case .deletionLimit(let message): return message
        }
    }
}
