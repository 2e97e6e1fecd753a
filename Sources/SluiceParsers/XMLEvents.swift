/// One attribute of an element, borrowed from the parser for one callback.
package struct XMLAttribute {
    /// Local name (prefix stripped).
    package var name: ByteSpan
    /// The value as libxml2 delivered it: character references decoded, but
    /// `&` still written as `&#38;` (libxml2 does that when it does not expand
    /// entities); ``XMLPushParser`` undoes that before handing it over.
    package var value: ByteSpan
}

/// Receives the events of an XML document in document order.
///
/// Methods may throw to stop the parse; the error is reported as
/// ``ParseError/Reason/rejected(_:)`` at the current location. Spans are valid
/// only during the call.
package protocol XMLEventHandler: AnyObject {
    /// An element opens; `attributes` are in document order.
    func startElement(name: ByteSpan, attributes: UnsafeBufferPointer<XMLAttribute>) throws
    /// The innermost open element closes.
    func endElement() throws
    /// Character data (text, CDATA or decoded references) inside the current
    /// element; may arrive in several pieces.
    func characters(_ text: ByteSpan) throws
    /// An element that the parse skipped stood here
    /// (``XMLPushParser/feed(skipping:starts:ends:)``): a record whose
    /// digest the store kept, numbered as if it were read.
    func elementSkipped() throws
}

extension XMLEventHandler {
    /// Handlers that are never fed skipped elements need not count them.
    package func elementSkipped() throws {}
}
