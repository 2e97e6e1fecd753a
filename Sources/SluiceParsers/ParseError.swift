/// An input that is not well-formed, or a stop requested by the event
/// handler, with the place it happened.
public struct ParseError: Error, Sendable, CustomStringConvertible {
    /// What went wrong.
    public enum Reason: Sendable {
        /// The parser's own message (libxml2 or yajl), trimmed to one line.
        case malformed(String)
        /// The event handler refused the input and said why.
        case rejected(any Error)
    }

    /// What went wrong.
    public var reason: Reason
    /// Where it went wrong.
    public var location: SourceLocation

    /// Creates an error at `location`.
    public init(_ reason: Reason, at location: SourceLocation) {
        self.reason = reason
        self.location = location
    }

    /// `location: message`.
    public var description: String {
        switch reason {
        case .malformed(let message): return "\(location): \(message)"
        case .rejected(let error): return "\(location): \(error)"
        }
    }
}
