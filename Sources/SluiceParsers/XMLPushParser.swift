import CSluiceXML2

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

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
    /// An element the parse skips (``feed(skipping:starts:ends:)``): how far
    /// its first marker is written; whether it is the root, whether the
    /// document is read as UTF-8; the columns its current line counts more
    /// than the input's (a space for each byte of a non-ASCII character); the
    /// last bytes of its blank, held back; its length so far.
    private var blanking = Blanking.body
    private var blankingRoot = false
    private var blankingUTF8 = false
    private var drift = 0
    private var tail: [UInt8] = []
    private var blanked = 0
    private var blanks: [UInt8] = []
    /// The markers fed and not yet parsed, first first: -1 for an element's
    /// first, else an element's last, with the columns libxml2 then counts
    /// too many; whether the end of a marker is due.
    @exclusivity(unchecked) private var markers: [Int] = []
    @exclusivity(unchecked) private var swallowing = false
    private enum Blanking {
        /// Next: the marker's `<`, its name, the space inside it (until two
        /// bytes on one line can take `/>`), its `/` owed; then the rest.
        case open, name, space, slash, body
    }

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

    /// Feeds `bytes` of an element that the parse skips (a record whose
    /// digest the store kept) blanked, so that libxml2 reads the document
    /// around it whole and reports its locations: line breaks are kept, the
    /// element's first bytes become an empty element `<_/>` (a line break
    /// among them stays, as space inside that tag), the rest spaces, and its
    /// last four bytes, when they hold no line break, a second `<_/>`. The
    /// handler never sees either: it gets ``XMLEventHandler/elementSkipped()``
    /// when libxml2 reaches the first, in document order; when it reaches the
    /// second, libxml2's column is set back by the bytes past the first of
    /// each non-ASCII character on the element's last line (UTF-8), so that
    /// an error after the element on that line has the column a full parse
    /// gives it (libxml2 counts characters). The root element gets no second
    /// marker (a document has one root). `starts` when `bytes` are the
    /// element's first, `ends` when its last. Costs a copy of the bytes, a
    /// count of their continuation bytes and libxml2's scan of spaces (its
    /// fast path); buffers: one as large as the largest piece.
    ///
    /// - Throws: ``ParseError`` when the document before the element is not
    ///   well-formed, or the handler throws.
    package func feed(skipping bytes: UnsafeRawBufferPointer, starts: Bool, ends: Bool) throws(ParseError) {
        if starts {
            blanking = .open
            markers.append(-1)
            blankingRoot = (context?.pointee.nameNr ?? 0) == 0
            blankingUTF8 = readsUTF8
            drift = 0
            tail.removeAll(keepingCapacity: true)
            blanked = 0
        }
        blanked += bytes.count
        // The bytes held back, and one more: the `/` owed at a piece's end.
        let needed = tail.count + bytes.count + 1
        if blanks.count < needed { blanks = [UInt8](repeating: 0, count: needed) }
        var failure: ParseError?
        blanks.withUnsafeMutableBufferPointer { out in
            var used = tail.count
            for (index, byte) in tail.enumerated() { out[index] = byte }
            tail.removeAll(keepingCapacity: true)
            guard let input = bytes.baseAddress?.assumingMemoryBound(to: UInt8.self), let output = out.baseAddress
            else { return }
            var index = 0
            while index < bytes.count && blanking != .body {
                let byte = input[index]
                let lineBreak = byte == UInt8(ascii: "\n") || byte == UInt8(ascii: "\r")
                index += 1
                switch blanking {
                case .open:
                    output[used] = UInt8(ascii: "<")
                    used += 1
                    blanking = .name
                case .name:
                    output[used] = UInt8(ascii: "_")
                    used += 1
                    blanking = .space
                case .space:
                    if lineBreak {
                        output[used] = byte
                        used += 1
                    } else {
                        blanking = .slash
                    }
                case .slash, .body:
                    // The `/` owed for the byte before: `/>` needs two bytes on one line.
                    output[used] = lineBreak ? UInt8(ascii: " ") : UInt8(ascii: "/")
                    output[used + 1] = lineBreak ? byte : UInt8(ascii: ">")
                    used += 2
                    blanking = lineBreak ? .space : .body
                }
            }
            // The rest at once: spaces, then the line breaks put back.
            let rest = bytes.count - index
            memset(output + used, Int32(UInt8(ascii: " ")), rest)
            var lastBreak = index - 1
            // `\n` (10), then `\r` (13).
            for lineBreak in stride(from: UInt8(ascii: "\n"), through: UInt8(ascii: "\r"), by: 3) {
                var from = index
                while from < bytes.count, let found = memchr(input + from, Int32(lineBreak), bytes.count - from) {
                    let at = input.distance(to: found.assumingMemoryBound(to: UInt8.self))
                    output[used + at - index] = lineBreak
                    lastBreak = max(lastBreak, at)
                    from = at + 1
                }
            }
            used += rest
            if blankingUTF8 {
                if lastBreak >= 0 { drift = 0 }
                drift += Self.continuationBytes(input + lastBreak + 1, count: bytes.count - lastBreak - 1)
            }
            if ends && blanking == .slash {
                output[used] = UInt8(ascii: " ")
                used += 1
            }
            if ends {
                // The second marker, over four spaces that end the element.
                if !blankingRoot && blanked >= 8 && used >= 4
                    && (used - 4..<used).allSatisfy({ output[$0] == UInt8(ascii: " ") })
                {
                    for (offset, byte) in "<_/>".utf8.enumerated() { output[used - 4 + offset] = byte }
                    markers.append(drift)
                }
            } else {
                let held = min(3, used)
                tail.append(contentsOf: UnsafeBufferPointer(start: output + used - held, count: held))
                used -= held
            }
            do throws(ParseError) { try feed(UnsafeRawBufferPointer(start: output, count: used)) } catch {
                failure = error
            }
        }
        if let failure { throw failure }
    }

    /// Whether libxml2 reads the document as UTF-8 (no encoding declared,
    /// or UTF-8 declared), so that the bytes of a non-ASCII character are one.
    private var readsUTF8: Bool {
        guard let encoding = context?.pointee.encoding else { return true }
        let name = String(cString: encoding).lowercased()
        return name == "utf-8" || name == "utf8"
    }

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
                    parser.markerParsed(parser.markers.removeFirst())
                } else {
                    parser.startElement(localName, Int(count), attributes)
                }
            }
        }
        sax.endElementNs = { context, _, _, _ in
            XMLPushParser.borrowing(context) { parser in
                if parser.swallowing {
                    parser.swallowing = false
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

    /// The bytes among `count` at `bytes` that continue a UTF-8 character
    /// (`10xxxxxx`), eight at a time.
    private static func continuationBytes(_ bytes: UnsafePointer<UInt8>, count: Int) -> Int {
        var found = 0
        var index = 0
        while index + 8 <= count {
            let word = UnsafeRawPointer(bytes + index).loadUnaligned(as: UInt64.self)
            // Bit 7 set and bit 6 clear, in each byte, as 1 in bit 0; the
            // product sums the eight bytes in its top byte.
            let ones = (word & ~(word << 1) & 0x8080_8080_8080_8080) >> 7
            found += Int((ones &* 0x0101_0101_0101_0101) >> 56)
            index += 8
        }
        while index < count {
            if bytes[index] & 0xC0 == 0x80 { found += 1 }
            index += 1
        }
        return found
    }

    /// libxml2 reached a marker of a skipped element: its first (`drift`
    /// -1) stands for a record; at its last, libxml2's column is set back
    /// by `drift`.
    private func markerParsed(_ drift: Int) {
        guard drift >= 0 else { return deliver { try handler.elementSkipped() } }
        if let input = context?.pointee.input { input.pointee.col -= Int32(clamping: drift) }
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
