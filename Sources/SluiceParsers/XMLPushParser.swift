import CSluiceXML2

/// libxml2 refuses to load anything from outside the document: no external
/// DTD, no external entity, no network. Installed once per process.
private let denyExternalEntities: Void = {
    xmlSetExternalEntityLoader { url, _, context in
        if let context {
            let name = url.map { String(cString: $0) } ?? "(unnamed)"
            XMLPushParser.recordRefusal(
                context, "external entity or DTD \"\(name)\" refused: sluice never loads external resources")
        }
        return nil
    }
}()

/// A streaming XML parser over libxml2's SAX2 push interface.
///
/// Feed it chunks of any size (1 byte works); it calls its
/// ``XMLEventHandler`` for each element, attribute set and text run, and keeps
/// no tree. Hardened: no entity expansion, no DTD loading or validation, no
/// network, no XInclude; a document that declares an entity or an attribute
/// default, or that is not XML 1.0, is refused.
/// Memory: libxml2's input buffer (about one chunk plus one unfinished token)
/// and one attribute scratch buffer.
/// Hot stored properties skip the dynamic exclusivity check (ARCHITECTURE.md,
/// "Hot path").
package final class XMLPushParser {
    private let handler: XMLEventHandler
    private let name: String
    private let decompressed: Bool
    private var context: xmlParserCtxtPtr?
    @exclusivity(unchecked) private var failure: ParseError?
    @exclusivity(unchecked) private var attributes: [XMLAttribute] = []
    @exclusivity(unchecked) private var scratch: [UInt8] = []
    private var fed: Int64 = 0
    /// The first bytes of the document, to compare a byte order mark with
    /// the declared encoding.
    private var head: [UInt8] = []
    /// The element the parse skips (``feed(skipping:starts:ends:)``) being
    /// read, and those fed as markers and not yet parsed, first first;
    /// whether the end of a marker is due.
    private var skipped = SkippedElement()
    @exclusivity(unchecked) private var markers: [SkippedElement] = []
    @exclusivity(unchecked) private var swallowing = false

    /// Creates a parser for the input called `name` (used in messages);
    /// `decompressed` says byte offsets are of a decompressed stream.
    package init(handler: XMLEventHandler, name: String, decompressed: Bool = false) {
        _ = denyExternalEntities
        self.handler = handler
        self.name = name
        self.decompressed = decompressed
    }

    deinit {
        if let context { xmlFreeParserCtxt(context) }
    }

    /// Parses the next bytes of the document. Costs time linear in the bytes.
    ///
    /// - Throws: ``ParseError`` when the document is not well-formed, when it
    ///   declares entities, or when the handler throws.
    package func feed(_ bytes: UnsafeRawBufferPointer) throws(ParseError) {
        guard bytes.count > 0 else { return }
        if head.count < 3 { head.append(contentsOf: bytes.prefix(3 - head.count)) }
        let context = try start()
        sluice_xml_silence_generic_errors()
        var offset = 0
        // xmlParseChunk takes an Int32 length.
        while offset < bytes.count {
            let length = min(bytes.count - offset, 1 << 30)
            let base = bytes.baseAddress!.advanced(by: offset).assumingMemoryBound(to: CChar.self)
            let code = xmlParseChunk(context, base, Int32(length), 0)
            fed += Int64(length)
            offset += length
            try check(code)
        }
    }

    /// Reads `bytes` of an element that the parse skips (a record whose
    /// digest the store kept) without parsing them: libxml2 is fed, once
    /// the element's last bytes are read, the empty element `<_/>` in its
    /// place, so that it reads the document around it whole. The handler
    /// never sees that marker: it gets ``XMLEventHandler/elementSkipped()``
    /// when libxml2 reaches it, in document order, and at its end libxml2's
    /// line, column and byte count are moved to where the element ends (the
    /// column in characters, as libxml2 counts it, when the document is read
    /// as UTF-8; in bytes otherwise), so that an error after it is reported
    /// where a full parse reports it. `starts` when `bytes` are the
    /// element's first, `ends` when its last. Costs a search of the bytes
    /// for line breaks and a count of the continuation bytes after the last
    /// one (``SkippedElement``); no copy, no buffer. Not `located`, none of
    /// that: the location is left where the marker leaves it, for a parse
    /// that only asks whether the document around the elements is
    /// well-formed.
    ///
    /// - Throws: ``ParseError`` when the document before the element is not
    ///   well-formed, or the handler throws.
    package func feed(
        skipping bytes: UnsafeRawBufferPointer, starts: Bool, ends: Bool, located: Bool = true
    ) throws(ParseError) {
        if starts { skipped = SkippedElement(located: located) }
        skipped.add(bytes)
        guard ends else { return }
        markers.append(skipped)
        try feed(UnsafeRawBufferPointer(start: Self.marker.utf8Start, count: Self.marker.utf8CodeUnitCount))
    }

    /// Starts a parse of part of a document (the records a parse thread is
    /// handed): feeds `context`, the bytes that give the part the meaning it
    /// has in the whole document (the XML declaration, the DOCTYPE and the
    /// start tags of the part's open ancestors), then moves libxml2's line,
    /// column (in characters, as libxml2 counts them) and byte count to
    /// where the part's first byte is in the whole document, so that what
    /// follows is located as a parse of the whole locates it. Costs the
    /// parse of `context`.
    ///
    /// - Throws: ``ParseError`` when `context` is not well-formed.
    package func place(
        after context: UnsafeRawBufferPointer, line: Int, column: Int, byteOffset: Int64
    ) throws(ParseError) {
        try feed(context)
        move(line: line, column: column, byteOffset: byteOffset)
    }

    /// Whether the parser was fed anything (a placed parse: its context).
    package var started: Bool { context != nil }

    /// Moves libxml2's line, column (in characters) and byte count to where
    /// the next bytes are in the whole document: those of the next unit a
    /// placed parse reads from its place, once the last one's end tag is
    /// parsed (``place(after:line:column:byteOffset:)`` for the first).
    /// Costs nothing but the stores.
    package func move(line: Int, column: Int, byteOffset: Int64) {
        guard let parser = self.context, let input = parser.pointee.input else { return }
        input.pointee.line = Int32(clamping: line)
        input.pointee.col = Int32(clamping: column)
        let consumed = Int64(xmlByteConsumed(parser))
        guard consumed >= 0, byteOffset >= consumed else { return }
        let moved = UInt(byteOffset - consumed)
        if let buffer = input.pointee.buf, buffer.pointee.encoder != nil {
            buffer.pointee.rawconsumed += moved
        } else {
            input.pointee.consumed += moved
        }
    }

    /// The empty element fed for each skipped one.
    private static let marker: StaticString = "<_/>"

    /// Ends the document: reports an error if it is incomplete (unclosed
    /// elements, no root element, truncated input).
    package func finish() throws(ParseError) {
        let context = try start()
        sluice_xml_silence_generic_errors()
        let code = xmlParseChunk(context, nil, 0, 1)
        try check(code)
        let utf16 = head.starts(with: [0xFF, 0xFE]) || head.starts(with: [0xFE, 0xFF])
        if utf16 && fed % 2 == 1 {
            throw ParseError(.malformed("the UTF-16 document ends in the middle of a character"), at: location)
        }
    }

    /// The current location, as libxml2 knows it.
    package var location: SourceLocation {
        guard let context else { return SourceLocation(file: name, decompressed: decompressed) }
        let consumed = xmlByteConsumed(context)
        return SourceLocation(
            file: name, line: Int(xmlSAX2GetLineNumber(context)),
            column: Int(xmlSAX2GetColumnNumber(context)),
            byteOffset: consumed >= 0 ? Int64(consumed) : nil, decompressed: decompressed)
    }

    private func start() throws(ParseError) -> xmlParserCtxtPtr {
        if let context { return context }
        var sax = xmlSAXHandler()
        sax.initialized = UInt32(XML_SAX2_MAGIC)
        sax.startElementNs = { context, localName, prefix, _, _, _, count, _, attributes in
            XMLPushParser.borrowing(context) { parser in
                if !parser.markers.isEmpty && prefix == nil && XMLPushParser.isMarker(localName) {
                    parser.swallowing = true
                    parser.deliver { try parser.handler.elementSkipped() }
                } else {
                    parser.startElement(localName, Int(count), attributes)
                }
            }
        }
        sax.endElementNs = { context, _, _, _ in
            XMLPushParser.borrowing(context) { parser in
                if parser.swallowing {
                    parser.swallowing = false
                    parser.markerEnded(parser.markers.removeFirst())
                } else {
                    parser.deliver { try parser.handler.endElement() }
                }
            }
        }
        sax.characters = { context, text, length in XMLPushParser.borrowing(context) { $0.text(text, length) } }
        sax.ignorableWhitespace = sax.characters
        sax.cdataBlock = sax.characters
        sax.entityDecl = { context, entityName, _, _, _, _ in
            let name = entityName.map { String(cString: $0) } ?? ""
            XMLPushParser.from(context).refuse(
                "the document declares the entity \"\(name)\"; entity declarations are refused (they enable entity-expansion attacks)"
            )
        }
        sax.unparsedEntityDecl = { context, entityName, _, _, _ in
            let name = entityName.map { String(cString: $0) } ?? ""
            XMLPushParser.from(context).refuse(
                "the document declares the unparsed entity \"\(name)\"; entity declarations are refused")
        }
        sax.attributeDecl = { context, element, attribute, _, _, defaultValue, tree in
            xmlFreeEnumeration(tree)
            guard defaultValue != nil else { return }
            let elementName = element.map { String(cString: $0) } ?? ""
            let attributeName = attribute.map { String(cString: $0) } ?? ""
            XMLPushParser.from(context).refuse(
                "the document declares a default value for attribute \"\(attributeName)\" of <\(elementName)>; "
                    + "DTD attribute defaults are refused (they enable quadratic-blowup attacks)")
        }
        sax.startDocument = { context in XMLPushParser.from(context).documentStarted() }
        sax.reference = { context, entityName in
            let name = entityName.map { String(cString: $0) } ?? ""
            XMLPushParser.from(context).refuse(
                "reference to the entity &\(name); which is declared only in an external DTD; sluice loads no DTD")
        }
        sax.serror = { userData, error in
            guard let userData, let error else { return }
            XMLPushParser.recordError(userData, error.pointee)
        }
        let userData = Unmanaged.passUnretained(self).toOpaque()
        guard let created = xmlCreatePushParserCtxt(&sax, userData, nil, 0, name) else {
            throw ParseError(.malformed("libxml2 could not create a parser"), at: location)
        }
        let options =
            Int32(XML_PARSE_NONET.rawValue) | Int32(XML_PARSE_NOCDATA.rawValue)
            | Int32(XML_PARSE_NOXINCNODE.rawValue)
        xmlCtxtUseOptions(created, options)
        // The SAX callbacks get our object as their context, not the parser's.
        created.pointee._private = userData
        context = created
        return created
    }

    private func check(_ code: Int32) throws(ParseError) {
        if let failure { throw failure }
        if code != 0 {
            throw ParseError(.malformed("libxml2 error \(code)"), at: location)
        }
    }

    // MARK: - Callbacks

    private static func from(_ pointer: UnsafeMutableRawPointer?) -> XMLPushParser {
        Unmanaged<XMLPushParser>.fromOpaque(pointer!).takeUnretainedValue()
    }

    /// Runs `body` with the parser behind `pointer`, borrowed rather than
    /// retained: the element and text callbacks come once per event.
    private static func borrowing(_ pointer: UnsafeMutableRawPointer?, _ body: (XMLPushParser) -> Void) {
        Unmanaged<XMLPushParser>.fromOpaque(pointer!)._withUnsafeGuaranteedRef(body)
    }

    /// libxml2 reached the end of the marker of `element`: its line,
    /// column and byte count are moved past the element's bytes.
    private func markerEnded(_ element: SkippedElement) {
        guard element.located, let input = context?.pointee.input else { return }
        // No encoder: libxml2 reads the bytes as they are, UTF-8.
        let encoded = input.pointee.buf.map { $0.pointee.encoder != nil } ?? false
        let columns = Int32(clamping: element.lastLineColumns(utf8: !encoded))
        let width = Int32(Self.marker.utf8CodeUnitCount)
        if element.lineBreaks > 0 {
            input.pointee.line += Int32(clamping: element.lineBreaks)
            input.pointee.col = 1 + columns
        } else {
            input.pointee.col += columns - width
        }
        let moved = UInt(element.bytes - Self.marker.utf8CodeUnitCount)
        if encoded, let buffer = input.pointee.buf {
            buffer.pointee.rawconsumed += moved
        } else {
            input.pointee.consumed += moved
        }
    }

    /// Whether `name` is `_`, the marker's name (``feed(skipping:starts:ends:)``).
    private static func isMarker(_ name: UnsafePointer<xmlChar>?) -> Bool {
        guard let name else { return false }
        return name[0] == UInt8(ascii: "_") && name[1] == 0
    }

    /// Called by the entity loader with libxml2's parser context.
    fileprivate static func recordRefusal(_ context: xmlParserCtxtPtr, _ message: String) {
        guard let userData = context.pointee._private else { return }
        from(userData).refuse(message)
    }

    private static func recordError(_ userData: UnsafeMutableRawPointer, _ error: xmlError) {
        let parser = from(userData)
        guard parser.failure == nil, error.level.rawValue >= XML_ERR_ERROR.rawValue else { return }
        var message = error.message.map { String(cString: $0) } ?? "XML error \(error.code)"
        while message.last?.isNewline == true { message.removeLast() }
        message = Self.limitWording(message)
        var location = parser.location
        if error.line > 0 { location.line = Int(error.line) }
        if error.int2 > 0 { location.column = Int(error.int2) }
        parser.failure = ParseError(.malformed(message), at: location)
    }

    /// libxml2's words for the token limits it keeps (sluice does not turn
    /// on its huge mode), said as limits: "internal error: Huge input
    /// lookup" (or, fed at once, "AttValue length too long") for an
    /// attribute value, comment or other single token over 10,000,000
    /// bytes, "Name too long" for a name over 50,000.
    static func limitWording(_ message: String) -> String {
        if message.contains("Huge input lookup") || message.hasPrefix("AttValue length too long") {
            return
                "a single XML token (an attribute value, comment or processing instruction) is longer than libxml2's limit of 10,000,000 bytes"
        }
        if message.hasPrefix("Name too long") {
            return "an XML name is longer than libxml2's limit of 50,000 bytes (\(message))"
        }
        return message
    }

    private func refuse(_ message: String) {
        guard failure == nil else { return }
        failure = ParseError(.malformed(message), at: location)
        if let context { xmlStopParser(context) }
    }

    /// After the XML declaration: only XML 1.0 is read (libxml2 would read
    /// 1.1 with 1.0's rules), and a byte order mark must agree with the
    /// declared encoding.
    private func documentStarted() {
        guard let context else { return }
        if let version = context.pointee.version, String(cString: version) != "1.0" {
            refuse("XML version \(String(cString: version)) is not supported; sluice reads XML 1.0")
            return
        }
        guard let declared = context.pointee.encoding.map({ String(cString: $0).lowercased() }) else { return }
        let bom: String?
        if head.starts(with: [0xEF, 0xBB, 0xBF]) {
            bom = "utf-8"
        } else if head.starts(with: [0xFF, 0xFE]) || head.starts(with: [0xFE, 0xFF]) {
            bom = "utf-16"
        } else {
            bom = nil
        }
        let normalised = String(declared.map { $0 == "_" ? "-" : $0 })
        if let bom, !(normalised.hasPrefix(bom) || (bom == "utf-8" && normalised == "utf8")) {
            refuse("the byte order mark says \(bom.uppercased()) but the document declares encoding \"\(declared)\"")
        }
    }

    private func deliver(_ body: () throws -> Void) {
        guard failure == nil else { return }
        do {
            try body()
        } catch {
            failure = ParseError(.rejected(error), at: location)
            if let context { xmlStopParser(context) }
        }
    }

    private func text(_ text: UnsafePointer<xmlChar>?, _ length: Int32) {
        guard let text, length > 0 else { return }
        deliver { try handler.characters(ByteSpan(start: text, count: Int(length))) }
    }

    private func startElement(
        _ localName: UnsafePointer<xmlChar>?, _ count: Int,
        _ raw: UnsafeMutablePointer<UnsafePointer<xmlChar>?>?
    ) {
        guard let localName else { return }
        let nameSpan = ByteSpan(start: localName, count: Int(xmlStrlen(localName)))
        attributes.removeAll(keepingCapacity: true)
        scratch.removeAll(keepingCapacity: true)
        // Values containing "&#38;" are decoded into `scratch`; remember where.
        var decoded: [(index: Int, start: Int, count: Int)] = []
        if let raw {
            for index in 0..<count {
                let base = index * 5
                guard let attributeName = raw[base], let start = raw[base + 3], let end = raw[base + 4] else {
                    continue
                }
                let value = ByteSpan(start: start, count: end - start)
                if value.contains(UInt8(ascii: "&")) {
                    let first = scratch.count
                    Self.decodeAmpersands(value, into: &scratch)
                    decoded.append((attributes.count, first, scratch.count - first))
                }
                attributes.append(
                    XMLAttribute(
                        name: ByteSpan(start: attributeName, count: Int(xmlStrlen(attributeName))), value: value))
            }
        }
        scratch.withUnsafeBufferPointer { scratchBytes in
            for entry in decoded {
                attributes[entry.index].value = ByteSpan(
                    rebasing: scratchBytes[entry.start..<(entry.start + entry.count)])
            }
            attributes.withUnsafeBufferPointer { list in
                deliver { try handler.startElement(name: nameSpan, attributes: list) }
            }
        }
    }

    /// libxml2 leaves `&` as `&#38;` in attribute values when it does not
    /// replace entities; any other `&` cannot remain in a well-formed value.
    private static func decodeAmpersands(_ value: ByteSpan, into output: inout [UInt8]) {
        let reference: [UInt8] = Array("&#38;".utf8)
        var index = 0
        while index < value.count {
            if value[index] == UInt8(ascii: "&"), index + 5 <= value.count,
                reference.indices.allSatisfy({ value[index + $0] == reference[$0] })
            {
                output.append(UInt8(ascii: "&"))
                index += 5
            } else {
                output.append(value[index])
                index += 1
            }
        }
    }
}
