/// The kind of a JSON scalar.
package enum JSONScalarKind: UInt8, Sendable {
    case string, number, `true`, `false`, null
}

/// Receives the events of a JSON text (or of each value of JSON Lines).
///
/// Numbers arrive as their source text, so 64-bit integers and long decimals
/// stay exact. Methods may throw to stop the parse; spans are valid only
/// during the call.
package protocol JSONEventHandler: AnyObject {
    /// `{`
    func startObject() throws
    /// An object member's key; the member's value follows.
    func key(_ name: ByteSpan) throws
    /// `}`
    func endObject() throws
    /// `[`
    func startArray() throws
    /// `]`
    func endArray() throws
    /// A string (unescaped UTF-8), number (source text), `true`, `false` or
    /// `null` (empty span for the last three).
    func scalar(_ kind: JSONScalarKind, _ text: ByteSpan) throws
    /// A value that the parse skipped stood here
    /// (``JSONPushParser/feed(skipping:starts:ends:)``): a record whose
    /// digest the store kept, numbered as if it were read.
    func valueSkipped() throws
}

extension JSONEventHandler {
    /// Handlers that are never fed skipped values need not count them.
    package func valueSkipped() throws {}
}
