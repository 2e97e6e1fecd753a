/// Where in an input something happened: the pieces a message needs to let a
/// user find the spot.
public struct SourceLocation: Sendable, Equatable, CustomStringConvertible {
    /// The input's name: a path, or `-` for standard input.
    public var file: String
    /// 1-based line, when known.
    public var line: Int?
    /// 1-based column, when known.
    public var column: Int?
    /// 0-based byte offset, when known. For compressed input it counts bytes
    /// of the decompressed stream (see ``decompressed``).
    public var byteOffset: Int64?
    /// The offsets are of the decompressed stream of a compressed file.
    public var decompressed: Bool
    /// 1-based ordinal of the record being read in this input, if any.
    public var record: Int?

    /// Creates a location; unknown parts stay `nil`.
    public init(
        file: String, line: Int? = nil, column: Int? = nil, byteOffset: Int64? = nil,
        decompressed: Bool = false, record: Int? = nil
    ) {
        self.file = file
        self.line = line
        self.column = column
        self.byteOffset = byteOffset
        self.decompressed = decompressed
        self.record = record
    }

    /// `file:line:column (byte N of the decompressed stream), record N`.
    public var description: String {
        var text = file
        if let line {
            text += ":\(line)"
            if let column { text += ":\(column)" }
        }
        if let byteOffset {
            text += decompressed ? " (byte \(byteOffset) of the decompressed stream)" : " (byte \(byteOffset))"
        }
        if let record { text += ", record \(record)" }
        return text
    }
}
