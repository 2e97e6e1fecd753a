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

/// A ``JSONEventHandler`` that takes a long string in pieces: a parser given
/// one (``JSONPushParser``'s `longStringBytes`) hands over a string value that
/// yajl would otherwise have to hold whole as ``stringStart(_:)`` with its
/// first bytes, then ``stringPiece(_:)`` for each further piece, then
/// ``stringEnd()``, in place of one ``JSONEventHandler/scalar(_:_:)``.
/// Pieces are unescaped UTF-8 (a piece may end inside a character that the
/// next one finishes); a key arrives whole as before.
package protocol JSONStringPieceHandler: JSONEventHandler {
    /// A string value begins with `text`.
    func stringStart(_ text: ByteSpan) throws
    /// The next bytes of the string value begun last.
    func stringPiece(_ text: ByteSpan) throws
    /// The string value begun last is complete.
    func stringEnd() throws
}
