import CSluiceYAJL

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A streaming JSON parser over yajl's callback interface.
///
/// Feed it chunks of any size; it calls its ``JSONEventHandler`` for every
/// token and builds nothing. Numbers are delivered as text. A UTF-8 byte order
/// mark at the very start is skipped. With `multipleValues` it reads JSON Lines
/// (or any whitespace-separated sequence of values); without, exactly one value.
/// A value cut off at the end of input is an error: partial values are never
/// accepted. Memory: yajl's token buffer (the longest unfinished token);
/// with `longStringBytes` and a ``JSONStringPieceHandler``, a longer string
/// that reaches the end of a chunk is read by the parser itself and handed
/// over in pieces, so no more than about that much plus a chunk.
/// Hot stored properties skip the dynamic exclusivity check (ARCHITECTURE.md,
/// "Hot path").
package final class JSONPushParser {
    private let handler: JSONEventHandler
    private let name: String
    private let decompressed: Bool
    private let callbacks: UnsafeMutablePointer<yajl_callbacks>
    private var handle: yajl_handle?
    @exclusivity(unchecked) private var failure: ParseError?
    /// Bytes of the document passed to yajl before the current chunk.
    private var fedBefore: Int64 = 0
    /// Newlines in those bytes, and the offset just after the last one.
    private var newlinesBefore = 0
    private var lineStart: Int64 = 0
    /// The first bytes, held back until it is known whether they are a BOM.
    private var head: [UInt8] = []
    private var headDone = false
    @exclusivity(unchecked) private var currentChunk: UnsafeRawBufferPointer?
    private var validator = JSONTextValidator()
    /// The most bytes yajl may take in without a single callback: it buffers
    /// an unfinished token whole, so this bounds its memory.
    private let maxTokenBytes: Int
    /// The longest number (or true, false, null) accepted: yajl lexes a held
    /// token again with every chunk, so an 8 MiB number took 2.8 s to
    /// refuse. 64 KiB is a thousand times the digits of any double or
    /// 64-bit integer.
    static let maxNumberBytes = 64 << 10
    /// Whether any number of top-level values is read (JSON Lines).
    private let multipleValues: Bool
    /// Bytes of the unfinished token yajl holds at the end of the input fed
    /// so far (0 between tokens), and whether it is a string; see
    /// ``noteHeldToken(_:)``.
    private var heldBytes = 0
    private var heldIsString = false
    /// Where the last event of the current chunk ended.
    @exclusivity(unchecked) private var lastEventEnd = 0
    @exclusivity(unchecked) private var eventSeen = false
    /// The value the parse skips (``feed(skipping:starts:ends:)``) being
    /// read: its first byte, and the location it starts at.
    private var skippedFirst: UInt8 = 0
    private var skippedStart: (fed: Int64, newlines: Int, lineStart: Int64) = (0, 0, 0)
    /// Where in the current chunk the bytes last given to yajl start.
    @exclusivity(unchecked) private var yajlBase = 0
    /// The handler that takes long strings in pieces, and how long a string
    /// yajl holds at the end of a chunk must be for it to get them; nil:
    /// yajl holds every string whole.
    private let pieceHandler: JSONStringPieceHandler?
    private let longStringBytes: Int
    /// Set at the end of a chunk after which yajl holds a string longer than
    /// `longStringBytes`: the validator as it was there, which says where
    /// the next chunk finishes the character the string was cut inside.
    @exclusivity(unchecked) private var cutFrom: JSONTextValidator?
    /// The rest of a cut string, read by the parser (``JSONLongString``).
    @exclusivity(unchecked) private var longString: JSONLongString?

    /// Creates a parser for the input called `name`; `multipleValues` accepts
    /// any number of top-level values (JSON Lines); `decompressed` says byte
    /// offsets are of a decompressed stream; `maxTokenBytes` bounds the bytes
    /// read without any event (one giant string or number); a string value
    /// longer than `longStringBytes` that a chunk ends inside goes to a
    /// ``JSONStringPieceHandler`` in pieces (nil, or another handler: whole).
    package init(
        handler: JSONEventHandler, name: String, multipleValues: Bool, decompressed: Bool = false,
        maxTokenBytes: Int = 16 << 20, longStringBytes: Int? = nil
    ) {
        self.handler = handler
        pieceHandler = longStringBytes == nil ? nil : handler as? JSONStringPieceHandler
        self.longStringBytes = longStringBytes ?? Int.max
        self.multipleValues = multipleValues
        self.maxTokenBytes = maxTokenBytes
        self.name = name
        self.decompressed = decompressed
        callbacks = .allocate(capacity: 1)
        callbacks.initialize(to: Self.makeCallbacks(cutting: false))
        // yajl keeps the pointer to `callbacks`, so it lives as long as `handle`.
        handle = yajl_alloc(callbacks, nil, Unmanaged.passUnretained(self).toOpaque())
        if let handle {
            _ = sluice_yajl_config(handle, yajl_allow_multiple_values, multipleValues ? 1 : 0)
            _ = sluice_yajl_config(handle, yajl_allow_partial_values, 0)
            _ = sluice_yajl_config(handle, yajl_allow_trailing_garbage, 0)
        }
    }

    deinit {
        if let handle { yajl_free(handle) }
        callbacks.deinitialize(count: 1)
        callbacks.deallocate()
    }

    /// Parses the next bytes. Costs time linear in the bytes.
    ///
    /// - Throws: ``ParseError`` when the text is not valid JSON or the handler
    ///   throws.
    package func feed(_ bytes: UnsafeRawBufferPointer) throws(ParseError) {
        guard bytes.count > 0 else { return }
        if !headDone {
            head.append(contentsOf: bytes)
            if head.count < 3 && head.elementsEqual([0xEF, 0xBB, 0xBF].prefix(head.count)) { return }
            headDone = true
            let skip = head.starts(with: [0xEF, 0xBB, 0xBF]) ? 3 : 0
            let held = head
            head = []
            fedBefore = Int64(skip)
            lineStart = Int64(skip)
            try parseHeld(held, from: skip)
            return
        }
        try parse(bytes)
    }

    /// Places the next bytes fed at `byteOffset` of the input, on 1-based
    /// `line` whose first byte is at `lineStart`: a parse fed only some of an
    /// input's values (the records whose digests are new) reports the
    /// locations of the whole input. Between values only.
    package func skip(to byteOffset: Int64, line: Int, lineStart: Int64) throws(ParseError) {
        try flushHead()
        fedBefore = byteOffset
        newlinesBefore = line - 1
        self.lineStart = lineStart
    }

    /// Reads `bytes` of a value that the parse skips (a record whose digest
    /// the store kept: an element of the array a record path addresses, the
    /// value of its member) without parsing them: once its last bytes are
    /// read, yajl is fed a marker in its place, the empty value its first
    /// byte begins (`{}`, `[]`, `""`, `0 `, or the literal), so that it reads
    /// the document around it whole. The handler never sees the marker: it
    /// gets ``JSONEventHandler/valueSkipped()`` instead. The marker is
    /// placed where the value's first token is (a container's at the
    /// value's start, a scalar's at its end), so that an error it meets (a
    /// value where none may stand) is reported where a full parse reports
    /// it; then the location moves past the value's bytes, so that an error
    /// after it is too. `starts` when `bytes` are the value's first, `ends`
    /// when its last. Costs a search of the bytes for line breaks; no copy.
    ///
    /// - Throws: ``ParseError`` when the document before the value is not
    ///   valid JSON there, or the handler throws.
    package func feed(skipping bytes: UnsafeRawBufferPointer, starts: Bool, ends: Bool) throws(ParseError) {
        try flushHead()
        if starts {
            skippedFirst = bytes.first ?? 0
            skippedStart = (fedBefore, newlinesBefore, lineStart)
        }
        countLines(bytes, upTo: bytes.count)
        fedBefore += Int64(bytes.count)
        guard ends else { return }
        let end = (fed: fedBefore, newlines: newlinesBefore, lineStart: lineStart)
        // The marker and the length of its first token; a scalar is one
        // token on one line, so its marker's token ends where it ends.
        let (marker, token): (StaticString, Int)
        switch skippedFirst {
        case UInt8(ascii: "{"): (marker, token) = ("{}", 0)
        case UInt8(ascii: "["): (marker, token) = ("[]", 0)
        case UInt8(ascii: "\""): (marker, token) = ("\"\"", 2)
        case UInt8(ascii: "t"): (marker, token) = ("true", 4)
        case UInt8(ascii: "f"): (marker, token) = ("false", 5)
        case UInt8(ascii: "n"): (marker, token) = ("null", 4)
        default: (marker, token) = ("0 ", 1)
        }
        if token == 0 { (fedBefore, newlinesBefore, lineStart) = skippedStart } else { fedBefore -= Int64(token) }
        try parseMarker(UnsafeRawBufferPointer(start: marker.utf8Start, count: marker.utf8CodeUnitCount))
        (fedBefore, newlinesBefore, lineStart) = end
    }

    /// Feeds yajl `marker` with the callbacks that turn its events into one
    /// ``JSONEventHandler/valueSkipped()``.
    private func parseMarker(_ marker: UnsafeRawBufferPointer) throws(ParseError) {
        guard let handle else { throw ParseError(.malformed("yajl could not be started"), at: location(consumed: 0)) }
        callbacks.pointee = Self.markerCallbacks
        defer { callbacks.pointee = Self.makeCallbacks(cutting: false) }
        currentChunk = marker
        yajlBase = 0
        let status = yajl_parse(handle, marker.baseAddress!.assumingMemoryBound(to: UInt8.self), marker.count)
        try check(status, chunk: marker)
        currentChunk = nil
    }

    /// Parses the first bytes held back to tell a byte order mark, if any.
    private func flushHead() throws(ParseError) {
        guard !headDone else { return }
        headDone = true
        let held = head
        head = []
        try parseHeld(held, from: 0)
    }

    /// Ends the input: an unfinished value, or no value at all, is an error.
    package func finish() throws(ParseError) {
        try flushHead()
        guard let handle else { throw ParseError(.malformed("yajl could not be started"), at: location(consumed: 0)) }
        currentChunk = nil
        yajlBase = 0
        do { try validator.finish(at: 0) } catch {
            throw ParseError(.malformed(error.message), at: location(consumed: 0))
        }
        if longString != nil {
            throw ParseError(.malformed(Self.yajlMessage(afterQuote: [], complete: true)), at: location(consumed: 0))
        }
        let status = yajl_complete_parse(handle)
        try check(status, chunk: UnsafeRawBufferPointer(start: nil, count: 0))
    }

    private func parseHeld(_ held: [UInt8], from start: Int) throws(ParseError) {
        guard start < held.count else { return }
        do {
            try held.withUnsafeBytes { raw in try parse(UnsafeRawBufferPointer(rebasing: raw[start...])) }
        } catch let error as ParseError {
            throw error
        } catch {
            throw ParseError(.rejected(error), at: location(consumed: 0))
        }
    }

    private func parse(_ chunk: UnsafeRawBufferPointer) throws(ParseError) {
        guard chunk.count > 0 else { return }
        guard handle != nil else {
            throw ParseError(.malformed("yajl could not be started"), at: location(consumed: 0))
        }
        currentChunk = chunk
        eventSeen = false
        do {
            try validator.check(chunk)
        } catch {
            // Let yajl report a syntax error that comes first in the chunk.
            if error.offset > 0 { try parseValid(chunk, upTo: error.offset) }
            throw ParseError(.malformed(error.message), at: location(consumed: error.offset))
        }
        try parseValid(chunk, upTo: chunk.count)
        if let longString {
            heldBytes = longString.rawBytes
            heldIsString = true
        } else {
            noteHeldToken(chunk)
        }
        if heldBytes > maxTokenBytes {
            throw ParseError(
                .malformed(
                    "no complete JSON token in \(heldBytes) bytes: a value exceeds max-field-bytes (\(maxTokenBytes))"),
                at: location(consumed: chunk.count))
        }
        if !heldIsString && heldBytes > Self.maxNumberBytes {
            throw ParseError(
                .malformed("a number (or true, false, null) longer than \(Self.maxNumberBytes) bytes"),
                at: location(consumed: chunk.count))
        }
        if longString != nil {
            handOver()
        } else if pieceHandler != nil && heldIsString && heldBytes > longStringBytes {
            cutFrom = validator
        }
        countLines(chunk, upTo: chunk.count)
        fedBefore += Int64(chunk.count)
        currentChunk = nil
    }

    /// Parses `chunk[..<end]`, text the validator passed: the rest of a long
    /// string by the parser (cutting the string yajl holds first, when the
    /// last chunk asked for it), all else by yajl.
    private func parseValid(_ chunk: UnsafeRawBufferPointer, upTo end: Int) throws(ParseError) {
        var start = 0
        if let from = cutFrom {
            cutFrom = nil
            if let finish = from.bytesToFinishCharacter(UnsafeRawBufferPointer(rebasing: chunk[..<end])) {
                try yajlParse(chunk, from: 0, to: finish)
                heldBytes += finish
                try cut(at: finish)
                start = finish
            }
        }
        if longString != nil {
            guard let closed = try readLongString(chunk, from: start, to: end) else { return }
            start = closed
        }
        try yajlParse(chunk, from: start, to: end)
    }

    /// Hands `chunk[start..<end]` to yajl.
    private func yajlParse(_ chunk: UnsafeRawBufferPointer, from start: Int, to end: Int) throws(ParseError) {
        guard start < end, let handle else { return }
        let part = UnsafeRawBufferPointer(rebasing: chunk[start..<end])
        yajlBase = start
        try check(yajl_parse(handle, part.baseAddress!.assumingMemoryBound(to: UInt8.self), part.count), chunk: part)
    }

    /// Ends yajl's part of the string it holds with a quote of our own, at
    /// `offset` of the current chunk (where a character ends): its callback,
    /// swapped in for this one call, begins ``longString``, which reads the
    /// rest. An error yajl finds now, it would have found at the string's
    /// end: it waits there.
    private func cut(at offset: Int) throws(ParseError) {
        guard let handle else { return }
        var quote = UInt8(ascii: "\"")
        yajlBase = offset
        callbacks.pointee = Self.makeCallbacks(cutting: true)
        let status = yajl_parse(handle, &quote, 1)
        callbacks.pointee = Self.makeCallbacks(cutting: false)
        if status == yajl_status_ok { return }
        let reason: ParseError.Reason
        if let failure {
            reason = failure.reason
        } else {
            reason = .malformed(Self.message(of: handle, multipleValues: multipleValues))
        }
        if longString == nil { longString = JSONLongString(isKey: false, rawBytes: heldBytes) }
        longString?.failure = reason
        // yajl places some errors at the token's start (in the chunk where
        // the token ends: at that chunk's start when the token began before).
        longString?.failsAtStart = failure == nil && yajl_get_bytes_consumed(handle) == 0
    }

    /// Begins ``longString`` with yajl's part of it (during ``cut(at:)``).
    private func beginLongString(_ text: ByteSpan, isKey: Bool) throws {
        longString = JSONLongString(isKey: isKey, rawBytes: heldBytes)
        if isKey {
            longString?.decoded.append(contentsOf: text)
        } else {
            try pieceHandler?.stringStart(text)
        }
    }

    /// Reads ``longString`` on from `chunk[start..<end]`; where it ends in
    /// the chunk (just past the quote), nil when it goes on. At its end it
    /// hands over the rest (a key whole), or reports what went wrong in it
    /// there.
    private func readLongString(
        _ chunk: UnsafeRawBufferPointer, from start: Int, to end: Int
    ) throws(ParseError) -> Int? {
        let closed: Int?
        do {
            closed = try longString?.read(UnsafeRawBufferPointer(rebasing: chunk[start..<end]))
        } catch {
            throw ParseError(
                .malformed(Self.yajlMessage(afterQuote: error.sample, complete: false)),
                at: location(consumed: start + error.offset))
        }
        guard let closed else { return nil }
        let stop = start + closed
        handOver()
        guard let string = longString else { return stop }
        longString = nil
        eventSeen = true
        lastEventEnd = stop
        if let failure = string.failure {
            throw ParseError(
                failure, at: location(consumed: string.failsAtStart ? max(0, stop - string.rawBytes) : stop))
        }
        do {
            if string.isKey {
                try string.decoded.withUnsafeBufferPointer { try handler.key($0) }
            } else {
                try pieceHandler?.stringEnd()
            }
        } catch {
            throw ParseError(.rejected(error), at: location(consumed: stop))
        }
        return stop
    }

    /// Hands the long string's decoded bytes to the handler (a key's wait
    /// for its end); a refusal is kept and reported at the string's end,
    /// where a parse holding the string whole would have made it.
    private func handOver() {
        guard var string = longString, !string.isKey, string.failure == nil, !string.decoded.isEmpty else { return }
        longString = nil
        do {
            try string.decoded.withUnsafeBufferPointer { try pieceHandler?.stringPiece($0) }
        } catch {
            string.failure = .rejected(error)
        }
        string.decoded.removeAll(keepingCapacity: true)
        longString = string
    }

    /// yajl's message for `"` then `sample` inside an array (with
    /// `complete`, at the end of the input): what it reports for the same
    /// bytes in a string it holds whole. O(sample).
    private static func yajlMessage(afterQuote sample: [UInt8], complete: Bool) -> String {
        var table = yajl_callbacks()
        let text: [UInt8] = [UInt8(ascii: "["), UInt8(ascii: "\"")] + sample
        return withUnsafePointer(to: &table) { callbacks in
            guard let handle = yajl_alloc(callbacks, nil, nil) else { return "invalid JSON" }
            defer { yajl_free(handle) }
            var status = text.withUnsafeBufferPointer { yajl_parse(handle, $0.baseAddress, $0.count) }
            if status == yajl_status_ok && complete { status = yajl_complete_parse(handle) }
            return message(of: handle, multipleValues: true)
        }
    }

    /// How much of an unfinished token yajl holds after `chunk`. Events end
    /// tokens, and nothing between two tokens but white space, `,` and `:`
    /// goes without one; so what follows the chunk's last event (or, in a
    /// chunk without events, follows the token still held) is white space
    /// and separators, then at most the start of the next token. White space
    /// between values is never held: `[` and 1 GiB of spaces is read in
    /// constant memory. O(bytes after the chunk's last event).
    private func noteHeldToken(_ chunk: UnsafeRawBufferPointer) {
        if !eventSeen && heldBytes > 0 {
            heldBytes += chunk.count
            return
        }
        var start = eventSeen ? lastEventEnd : 0
        while start < chunk.count, [0x20, 0x09, 0x0A, 0x0D, 0x2C, 0x3A].contains(chunk[start]) { start += 1 }
        heldBytes = chunk.count - start
        heldIsString = start < chunk.count && chunk[start] == 0x22
    }

    private func check(_ status: yajl_status, chunk: UnsafeRawBufferPointer) throws(ParseError) {
        if status == yajl_status_ok { return }
        let consumed = chunk.count > 0 ? yajlBase + Int(yajl_get_bytes_consumed(handle)) : 0
        if let failure { throw failure }
        guard let handle else { throw ParseError(.malformed("invalid JSON"), at: location(consumed: consumed)) }
        throw ParseError(
            .malformed(Self.message(of: handle, multipleValues: multipleValues)), at: location(consumed: consumed))
    }

    /// yajl's message for the error `handle` stopped at, on one line.
    private static func message(of handle: yajl_handle, multipleValues: Bool) -> String {
        var message = "invalid JSON"
        if let text = yajl_get_error(handle, 0, nil, 0) {
            message = String(cString: text).trimmingWhitespace
            yajl_free_error(handle, text)
        }
        if !multipleValues && message.contains("trailing garbage") {
            message +=
                " (another value follows the first: if this is JSON Lines, give --format jsonl or name it .jsonl)"
        }
        return message
    }

    /// The location `consumed` bytes into the current chunk.
    private func location(consumed: Int) -> SourceLocation {
        var newlines = newlinesBefore
        var start = lineStart
        if let chunk = currentChunk {
            let bytes = chunk.bindMemory(to: UInt8.self)
            for index in 0..<min(consumed, bytes.count) where bytes[index] == 0x0A {
                newlines += 1
                start = fedBefore + Int64(index) + 1
            }
        }
        let offset = fedBefore + Int64(consumed)
        return SourceLocation(
            file: name, line: newlines + 1, column: Int(offset - start) + 1, byteOffset: offset,
            decompressed: decompressed)
    }

    /// The current location (during a callback: just after the current token).
    package var location: SourceLocation {
        location(consumed: currentChunk == nil ? 0 : yajlBase + Int(yajl_get_bytes_consumed(handle)))
    }

    private func countLines(_ chunk: UnsafeRawBufferPointer, upTo end: Int) {
        guard var cursor = chunk.baseAddress else { return }
        let stop = cursor + end
        while cursor < stop, let found = memchr(cursor, 0x0A, stop - cursor) {
            newlinesBefore += 1
            let position = UnsafeRawPointer(found)
            lineStart = fedBefore + Int64(position - chunk.baseAddress!) + 1
            cursor = position + 1
        }
    }

    // MARK: - Callbacks

    /// Runs `body` with the parser behind `context` and reports to yajl
    /// whether to go on; borrows the parser instead of retaining it for
    /// every token.
    private static func deliver(_ context: UnsafeMutableRawPointer?, _ body: (JSONEventHandler) throws -> Void) -> Int32
    {
        Unmanaged<JSONPushParser>.fromOpaque(context!)._withUnsafeGuaranteedRef { parser in
            parser.deliver { try body(parser.handler) }
        }
    }

    private func deliver(_ body: () throws -> Void) -> Int32 {
        eventSeen = true
        lastEventEnd = yajlBase + Int(yajl_get_bytes_consumed(handle))
        do {
            try body()
            return 1
        } catch {
            failure = ParseError(.rejected(error), at: location)
            return 0
        }
    }

    /// The callbacks; with `cutting`, a string or key begins ``longString``
    /// (yajl reads them through the pointer it was given at each call).
    private static func makeCallbacks(cutting: Bool) -> yajl_callbacks {
        var table = yajl_callbacks()
        table.yajl_null = { context in
            JSONPushParser.deliver(context) { try $0.scalar(.null, ByteSpan(start: nil, count: 0)) }
        }
        table.yajl_boolean = { context, value in
            JSONPushParser.deliver(context) {
                try $0.scalar(value != 0 ? .true : .false, ByteSpan(start: nil, count: 0))
            }
        }
        table.yajl_number = { context, text, length in
            JSONPushParser.deliver(context) { handler in
                try text!.withMemoryRebound(to: UInt8.self, capacity: length) {
                    try handler.scalar(.number, ByteSpan(start: $0, count: length))
                }
            }
        }
        table.yajl_string = { context, text, length in
            JSONPushParser.deliver(context) { try $0.scalar(.string, ByteSpan(start: text, count: length)) }
        }
        table.yajl_start_map = { context in
            JSONPushParser.deliver(context) { try $0.startObject() }
        }
        table.yajl_map_key = { context, text, length in
            JSONPushParser.deliver(context) { try $0.key(ByteSpan(start: text, count: length)) }
        }
        table.yajl_end_map = { context in
            JSONPushParser.deliver(context) { try $0.endObject() }
        }
        table.yajl_start_array = { context in
            JSONPushParser.deliver(context) { try $0.startArray() }
        }
        table.yajl_end_array = { context in
            JSONPushParser.deliver(context) { try $0.endArray() }
        }
        guard cutting else { return table }
        table.yajl_string = { context, text, length in
            Unmanaged<JSONPushParser>.fromOpaque(context!)._withUnsafeGuaranteedRef { parser in
                parser.deliver { try parser.beginLongString(ByteSpan(start: text, count: length), isKey: false) }
            }
        }
        table.yajl_map_key = { context, text, length in
            Unmanaged<JSONPushParser>.fromOpaque(context!)._withUnsafeGuaranteedRef { parser in
                parser.deliver { try parser.beginLongString(ByteSpan(start: text, count: length), isKey: true) }
            }
        }
        return table
    }

    /// The callbacks while a skipped value's marker is parsed: its first
    /// event (the marker's only scalar, or its container's start) is
    /// ``JSONEventHandler/valueSkipped()``, its container's end nothing.
    private static let markerCallbacks: yajl_callbacks = {
        var table = yajl_callbacks()
        table.yajl_null = { context in JSONPushParser.deliver(context) { try $0.valueSkipped() } }
        table.yajl_boolean = { context, _ in JSONPushParser.deliver(context) { try $0.valueSkipped() } }
        table.yajl_number = { context, _, _ in JSONPushParser.deliver(context) { try $0.valueSkipped() } }
        table.yajl_string = { context, _, _ in JSONPushParser.deliver(context) { try $0.valueSkipped() } }
        table.yajl_start_map = { context in JSONPushParser.deliver(context) { try $0.valueSkipped() } }
        table.yajl_start_array = { context in JSONPushParser.deliver(context) { try $0.valueSkipped() } }
        table.yajl_end_map = { _ in 1 }
        table.yajl_end_array = { _ in 1 }
        return table
    }()
}

extension String {
    /// The string without leading and trailing spaces and newlines.
    var trimmingWhitespace: String {
        let characters = Substring(self).drop(while: \.isWhitespace)
        return String(characters.reversed().drop(while: \.isWhitespace).reversed())
    }
}
