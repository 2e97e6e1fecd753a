import SluiceParsers

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

extension RecordBoundaryScanner {
    /// The XML side of the scanner: a reading of markup only (tags, quoted
    /// attribute values, comments, CDATA sections, processing instructions,
    /// the DOCTYPE and its internal subset) that follows the record paths as
    /// ``RecordAssembler`` does, by local name. A unit is an element a path
    /// reaches, outside any other unit, from the `<` of its start tag to the
    /// `>` of its end tag (or of `/>`); its context is the XML declaration,
    /// the DOCTYPE (entities, attribute types) and the start tags of its
    /// open ancestors (namespace declarations, `xml:space`), closed after it
    /// by their end tags. Any set of paths is handled: the context puts each
    /// unit on its own path.
    struct XMLScan {
        /// Where the scan is in the markup.
        private enum Mode: UInt8 {
            /// Character data, looking for `<`.
            case text
            /// Just after `<`.
            case open
            /// A start tag's name; the rest of a start tag; a quoted
            /// attribute value in it.
            case name, tag, value
            /// An end tag.
            case endTag
            /// After `<!`, until it is known what follows.
            case bang
            /// A comment, a CDATA section, a processing instruction.
            case comment, cdata, instruction
            /// The DOCTYPE declaration.
            case doctype

            /// The modes ``skimUnit(_:from:count:position:_:)`` reads in.
            var isSkimmed: Bool {
                switch self {
                case .text, .tag, .value, .endTag: return true
                case .open, .name, .bang, .comment, .cdata, .instruction, .doctype: return false
                }
            }
        }

        /// Whether the bytes inside a unit are read 64 at a time
        /// (``skimUnit(_:from:count:position:_:)``); `false` reads them byte
        /// of interest by byte of interest, the plain path that the tests
        /// compare the skim with.
        private let skims: Bool

        private let paths: [[RecordPath.Component]]
        private let allRoutes: UInt64
        private var mode = Mode.text
        /// The quote that closes the current attribute value or DOCTYPE
        /// literal; 0 outside them.
        private var quote: UInt8 = 0
        /// Progress through a closing sequence (`-->`, `]]>`, `?>`) or
        /// through the bytes after `<!`.
        private var progress = 0
        /// A start tag's last byte outside quotes was `/`.
        private var slash = false
        /// The start tag being read is a unit's.
        private var unitTag = false
        /// The name of the start tag being read (outside units), at most
        /// `maxName` bytes.
        private var name: [UInt8] = []
        /// libxml2 refuses longer names.
        private let maxName = 50_001
        /// Depth of elements in the current unit (0 outside units).
        private var depth = 0
        /// Whether a unit is open.
        private var inUnit = false

        /// The byte order mark, XML declaration and DOCTYPE, as read.
        private var prolog: [UInt8] = []
        /// Whether an element has started (what follows is no prolog).
        private var rootSeen = false
        /// Open elements outside units: each one's route mask and where its
        /// start tag's bytes start in `tags` (the last may be incomplete).
        private var masks: [UInt64] = []
        private var tagStarts: [Int] = []
        private var tags: [UInt8] = []
        /// The input offset of the last `<` outside units.
        private var lessThan: Int64 = 0
        /// Where the tag being read started in the current chunk, or -1 when
        /// it started in an earlier one (its bytes so far are in `tags`).
        private var tagStart = -1
        /// Whether the bytes of the markup being read are kept in `tags`
        /// (a start tag outside units), `prolog` (XML declaration, DOCTYPE) or
        /// `pending` (markup outside units whose kind is not known yet).
        private var keeping = Keep.none
        private enum Keep { case none, tag, prolog, pending }
        private var pending: [UInt8] = []
        /// The context last handed out and the depth it is for; `dirty`,
        /// the lowest depth changed since.
        private var context = UnitContext()
        private var contextDepth = -1
        private var dirty = 0
        /// Newlines are counted up to here in the current chunk.
        private var counted = 0

        /// Why the input cannot be scanned, once known.
        private(set) var refusal: BoundaryScanRefusal?

        /// The bytes before `end` (the input offset the scan reached) of a
        /// start tag outside units whose name is still being read.
        func undecided(before end: Int64) -> Int {
            !inUnit && (mode == .open || mode == .name) ? Int(end - lessThan) : 0
        }

        init(paths: [RecordPath], skims: Bool) {
            self.skims = skims
            self.paths = paths.map(\.components)
            allRoutes = paths.count >= 64 ? UInt64.max : (UInt64(1) << UInt64(paths.count)) - 1
        }

        // MARK: - Scanning

        /// Scans `count` bytes at `bytes`, handing each boundary to `body`.
        mutating func scan<E: Error>(
            _ bytes: UnsafePointer<UInt8>, count: Int, position: inout ScanPosition,
            _ body: (UnitBoundary, UnitContext) throws(E) -> Void
        ) throws(E) {
            if position.chunkStart < 2 { checkEncoding(bytes, count: count, at: position.chunkStart) }
            guard refusal == nil else { return }
            counted = 0
            tagStart = -1
            var index = 0
            defer {
                countLines(bytes, upTo: count, &position)
                keep(bytes, from: tagStart < 0 ? 0 : tagStart, to: count)
            }
            while index < count {
                if skims && inUnit && count - index >= 64 && mode.isSkimmed {
                    index = try skimUnit(bytes, from: index, count: count, position: &position, body)
                    continue
                }
                let byte = bytes[index]
                switch mode {
                case .text:
                    guard let found = Self.find(UInt8(ascii: "<"), bytes, from: index, count: count) else {
                        return
                    }
                    index = found
                    mode = .open
                    lessThan = position.chunkStart + Int64(index)
                    if !inUnit {
                        tagStart = index
                        keeping = .pending
                    }
                case .open:
                    switch byte {
                    case UInt8(ascii: "/"):
                        mode = .endTag
                        decide(.none)
                    case UInt8(ascii: "?"):
                        mode = .instruction
                        progress = 0
                        // The XML declaration can only be the document's first bytes.
                        decide(!inUnit && !rootSeen && lessThan <= 3 ? .prolog : .none)
                    case UInt8(ascii: "!"):
                        mode = .bang
                        progress = 0
                        bangKind = 0
                    default:
                        // Inside a unit a start tag's name matters not: on to its end.
                        mode = inUnit ? .tag : .name
                        slash = false
                        if !inUnit {
                            name.removeAll(keepingCapacity: true)
                            tagStarts.append(tags.count)
                            decide(.tag)
                            masks.append(0)
                            if name.count < maxName { name.append(byte) }
                        }
                    }
                case .name:
                    if Self.isNameByte(byte) {
                        if !inUnit && name.count < maxName { name.append(byte) }
                    } else {
                        mode = .tag
                        if !inUnit { try startTagNamed(bytes, at: index, position: &position, body) }
                        continue
                    }
                case .tag:
                    // `/` is followed by `>` in a well-formed empty-element tag.
                    guard let found = Self.findTagByte(bytes, from: index, count: count) else {
                        slash = false
                        index = count
                        continue
                    }
                    if found > index {
                        slash = false
                        index = found
                        continue
                    }
                    switch byte {
                    case UInt8(ascii: ">"):
                        index += 1
                        try startTagEnded(bytes, at: index, position: &position, body)
                        continue
                    case UInt8(ascii: "\""), UInt8(ascii: "'"):
                        quote = byte
                        mode = .value
                        slash = false
                    default: slash = true
                    }
                case .value:
                    guard let found = Self.find(quote, bytes, from: index, count: count) else {
                        index = count
                        continue
                    }
                    index = found
                    mode = .tag
                    quote = 0
                case .endTag:
                    guard let found = Self.find(UInt8(ascii: ">"), bytes, from: index, count: count) else {
                        index = count
                        continue
                    }
                    index = found + 1
                    mode = .text
                    try endTagEnded(at: index, position: &position, body)
                    continue
                case .bang:
                    bang(byte)
                case .comment:
                    progress =
                        byte == UInt8(ascii: "-")
                        ? min(progress + 1, 2) : (byte == UInt8(ascii: ">") && progress == 2 ? 3 : 0)
                    if progress == 3 { mode = .text }
                case .cdata:
                    progress =
                        byte == UInt8(ascii: "]")
                        ? min(progress + 1, 2) : (byte == UInt8(ascii: ">") && progress == 2 ? 3 : 0)
                    if progress == 3 { mode = .text }
                case .instruction:
                    if byte == UInt8(ascii: ">") && progress == 1 {
                        mode = .text
                        index += 1
                        markupEnded(bytes, at: index)
                        continue
                    }
                    progress = byte == UInt8(ascii: "?") ? 1 : 0
                case .doctype:
                    if doctype(byte) {
                        mode = .text
                        index += 1
                        markupEnded(bytes, at: index)
                        continue
                    }
                }
                index += 1
            }
        }

        /// Reads on inside a unit from `start`, at least 64 bytes before
        /// `count`, in text, a tag, a quoted attribute value or an end tag,
        /// as the byte loop reads them, 64 bytes at a time: the block's `<`,
        /// `>`, `"` and `'` are found at once (``marks(_:)``) and only they
        /// are looked at, each by the mode the scan is in (a `/` matters only
        /// just before a start tag's `>`, where it is read back). Returns
        /// where the byte loop goes on: just past the unit's end, at the
        /// byte after the `<` of a comment, CDATA section or processing
        /// instruction (or a `<` the chunk ends with), or where fewer than
        /// 64 bytes are left.
        ///
        /// Measured by callgrind, the (c) run of 200,000 events (101 MB,
        /// Benchmarks/events-xml.yml, `--threads 1`): the scanner's inclusive
        /// instructions 1,004.6 M with a `memchr` or a 16-byte search from
        /// each byte that matters to the next (9.9 a byte), 693.7 M with the
        /// skim (6.9 a byte), 367 M of them the skim's own: about 1.5 a byte
        /// to find the bytes that matter, 25 for each of them (8.9 M, 4.4
        /// a hundred bytes). 16-byte blocks, two lanes' bits walked apart,
        /// cost 3 a byte to find them (985.6 M in all); a call for each
        /// tag's end, which reloaded the constants, 96 M more.
        private mutating func skimUnit<E: Error>(
            _ bytes: UnsafePointer<UInt8>, from start: Int, count: Int, position: inout ScanPosition,
            _ body: (UnitBoundary, UnitContext) throws(E) -> Void
        ) throws(E) -> Int {
            var block = start
            // The bytes before it are read (the byte after a `<` is, with it).
            var resume = start
            while block &+ 64 <= count {
                var bits = Self.marks(UnsafeRawPointer(bytes + block))
                while bits != 0 {
                    let at = block &+ bits.trailingZeroBitCount
                    bits &= bits &- 1
                    guard at >= resume else { continue }
                    let byte = bytes[at]
                    switch mode {
                    case .text:
                        guard byte == UInt8(ascii: "<") else { continue }
                        lessThan = position.chunkStart &+ Int64(at)
                        resume = at &+ 2
                        guard at &+ 1 < count else {
                            mode = .open
                            return count
                        }
                        switch bytes[at &+ 1] {
                        case UInt8(ascii: "/"): mode = .endTag
                        case UInt8(ascii: "!"), UInt8(ascii: "?"):
                            mode = .open
                            return at &+ 1
                        // A start tag's first byte is its name's, whatever it is.
                        default: mode = .tag
                        }
                    case .tag:
                        switch byte {
                        case UInt8(ascii: ">"):
                            mode = .text
                            let empty = at > start ? bytes[at &- 1] == UInt8(ascii: "/") : slash
                            if startTagEndedInUnit(empty: empty) {
                                try unitEnded(at: at &+ 1, position: &position, body)
                                return at &+ 1
                            }
                        case UInt8(ascii: "\""), UInt8(ascii: "'"):
                            quote = byte
                            mode = .value
                        default: break
                        }
                    case .value:
                        if byte == quote {
                            mode = .tag
                            quote = 0
                        }
                    case .endTag:
                        guard byte == UInt8(ascii: ">") else { continue }
                        mode = .text
                        if endTagEndedInUnit() {
                            try unitEnded(at: at &+ 1, position: &position, body)
                            return at &+ 1
                        }
                    case .open, .name, .bang, .comment, .cdata, .instruction, .doctype:
                        // Not met: each turn to these modes returns where it is made.
                        return at
                    }
                }
                block &+= 64
            }
            let end = max(block, resume)
            // A `/` read last in a tag is the `/` of `/>` if a `>` follows.
            if mode == .tag { slash = bytes[end &- 1] == UInt8(ascii: "/") }
            return end
        }

        /// Bit i set where the i-th of the 64 bytes at `pointer` is `<`, `>`,
        /// `"` or `'`: four 16-byte comparisons, each 8-byte lane's high bits
        /// gathered by one multiplication (no movemask in Swift's SIMD).
        @inline(__always)
        private static func marks(_ pointer: UnsafeRawPointer) -> UInt64 {
            typealias Bytes = SIMD16<UInt8>
            var bits: UInt64 = 0
            for part in 0..<4 {
                let loaded = pointer.loadUnaligned(fromByteOffset: part &* 16, as: Bytes.self)
                // `<` and `>` are 0x3C and 0x3E: one comparison after setting bit 1.
                let found = unsafeBitCast(
                    ((loaded | Bytes(repeating: 0x02)) .== Bytes(repeating: 0x3E))
                        .| (loaded .== Bytes(repeating: 0x22)) .| (loaded .== Bytes(repeating: 0x27)),
                    to: SIMD2<UInt64>.self)
                bits |= (gather(found[0]) | gather(found[1]) &<< 8) &<< UInt64(part &* 16)
            }
            return bits
        }

        /// The high bits of the 8 bytes of `lane`, byte i's as bit i: each
        /// high bit, times the sum of 2^(7j), lands once at bit 56 + i.
        @inline(__always)
        private static func gather(_ lane: UInt64) -> UInt64 {
            ((lane & 0x8080_8080_8080_8080) &* 0x0002_0408_1020_4081) &>> 56
        }

        /// Ends the input: it must not end inside a unit, an element or markup.
        func finish(position: ScanPosition) throws(ParseError) -> UnitBoundary? {
            guard refusal == nil else { return nil }
            if inUnit {
                throw ParseError(.malformed("the input ends inside a record's element"), at: position.endLocation())
            }
            if mode != .text || !masks.isEmpty {
                throw ParseError(.malformed("the input ends inside an element or markup"), at: position.endLocation())
            }
            return nil
        }

        /// Refuses a document whose first two bytes (the chunk's first
        /// `count`, at input offset `offset`) say UTF-16 or UTF-32, which
        /// cannot be read byte by byte as ASCII-compatible text.
        private mutating func checkEncoding(_ bytes: UnsafePointer<UInt8>, count: Int, at offset: Int64) {
            for index in 0..<min(count, 2 - Int(offset)) {
                let byte = bytes[index]
                if byte == 0 || (offset + Int64(index) == 0 && (byte == 0xFE || byte == 0xFF)) {
                    refusal = BoundaryScanRefusal("the XML document is in UTF-16 or UTF-32")
                }
            }
        }

        /// Bytes that continue an XML name (and anything not markup).
        @inline(__always)
        private static func isNameByte(_ byte: UInt8) -> Bool {
            switch byte {
            case 0x20, 0x09, 0x0A, 0x0D, UInt8(ascii: "/"), UInt8(ascii: ">"): return false
            default: return true
            }
        }

        /// The offset of the first `byte` at or after `start`, or `nil`.
        @inline(__always)
        private static func find(_ byte: UInt8, _ bytes: UnsafePointer<UInt8>, from start: Int, count: Int) -> Int? {
            guard start < count, let found = memchr(bytes + start, Int32(byte), count - start) else { return nil }
            return UnsafeRawPointer(found) - UnsafeRawPointer(bytes)
        }

        /// The offset of the first `>`, `"`, `'` or `/` at or after `start`,
        /// or `nil`; 16 bytes at a time.
        @inline(__always)
        private static func findTagByte(_ bytes: UnsafePointer<UInt8>, from start: Int, count: Int) -> Int? {
            typealias Bytes = SIMD16<UInt8>
            var index = start
            while index + 16 <= count {
                let block = UnsafeRawPointer(bytes + index).loadUnaligned(as: Bytes.self)
                let found = unsafeBitCast(
                    (block .== Bytes(repeating: 0x3E)) .| (block .== Bytes(repeating: 0x22))
                        .| (block .== Bytes(repeating: 0x27)) .| (block .== Bytes(repeating: 0x2F)),
                    to: SIMD2<UInt64>.self)
                if found[0] != 0 { return index + found[0].trailingZeroBitCount >> 3 }
                if found[1] != 0 { return index + 8 + found[1].trailingZeroBitCount >> 3 }
                index += 16
            }
            while index < count {
                switch bytes[index] {
                case 0x3E, 0x22, 0x27, 0x2F: return index
                default: index += 1
                }
            }
            return nil
        }

        /// Counts the newlines before `end` in the chunk not counted yet.
        private mutating func countLines(_ bytes: UnsafePointer<UInt8>, upTo end: Int, _ position: inout ScanPosition) {
            var cursor = counted
            while let found = Self.find(0x0A, bytes, from: cursor, count: end) {
                position.newline(at: found)
                cursor = found + 1
            }
            counted = max(counted, end)
        }

        // MARK: - Elements

        /// A start tag's name has been read (outside units): is it a unit?
        private mutating func startTagNamed<E: Error>(
            _ bytes: UnsafePointer<UInt8>, at index: Int, position: inout ScanPosition,
            _ body: (UnitBoundary, UnitContext) throws(E) -> Void
        ) throws(E) {
            rootSeen = true
            let level = masks.count - 1
            let parent = level == 0 ? allRoutes : masks[level - 1]
            var mask: UInt64 = 0
            var complete = -1
            if parent != 0 && name.count < maxName {
                let local = name.firstIndex(of: UInt8(ascii: ":")).map { name[($0 + 1)...] } ?? name[...]
                for route in 0..<paths.count where parent & (1 << UInt64(route)) != 0 && paths[route].count > level {
                    let matches: Bool
                    switch paths[route][level] {
                    case .anyName: matches = true
                    case .name(let wanted): matches = wanted.elementsEqual(local)
                    case .anyIndex: matches = false
                    }
                    guard matches else { continue }
                    mask |= 1 << UInt64(route)
                    if paths[route].count == level + 1 && complete < 0 { complete = route }
                }
            }
            masks[level] = mask
            guard complete >= 0 else { return }
            // The unit's start tag is not an ancestor: its bytes so far are carried.
            let tagOffset = tagStarts.removeLast()
            masks.removeLast()
            let carried = tagStart < 0 ? Array(tags[tagOffset...]) : []
            let first = tagStart < 0 ? 0 : tagStart
            // (Usually none are: an empty removal costs a call of 50 instructions a unit.)
            if tagOffset < tags.count { tags.removeSubrange(tagOffset...) }
            keeping = .none
            inUnit = true
            unitTag = true
            depth = 1
            countLines(bytes, upTo: first, &position)
            try body(position.start(at: first, absolute: lessThan), contextForUnit(carried: carried))
        }

        /// A start tag's `>` is just before `index`.
        private mutating func startTagEnded<E: Error>(
            _ bytes: UnsafePointer<UInt8>, at index: Int, position: inout ScanPosition,
            _ body: (UnitBoundary, UnitContext) throws(E) -> Void
        ) throws(E) {
            mode = .text
            if inUnit {
                if startTagEndedInUnit(empty: slash) { try unitEnded(at: index, position: &position, body) }
                return
            }
            markupEnded(bytes, at: index)
            dirty = min(dirty, masks.count - 1)
            if slash {
                masks.removeLast()
                tags.removeSubrange(tagStarts.removeLast()...)
            }
        }

        /// An end tag's `>` is just before `index`.
        private mutating func endTagEnded<E: Error>(
            at index: Int, position: inout ScanPosition, _ body: (UnitBoundary, UnitContext) throws(E) -> Void
        ) throws(E) {
            if inUnit {
                if endTagEndedInUnit() { try unitEnded(at: index, position: &position, body) }
            } else if !masks.isEmpty {
                masks.removeLast()
                tags.removeSubrange(tagStarts.removeLast()...)
                dirty = min(dirty, masks.count)
            }
        }

        /// A start tag inside a unit ended, with `/>` if `empty`: whether
        /// the unit ended (its own start tag was empty).
        @inline(__always)
        private mutating func startTagEndedInUnit(empty: Bool) -> Bool {
            if unitTag {
                unitTag = false
                if empty { depth = 0 }
            } else if !empty {
                depth += 1
            }
            return depth == 0
        }

        /// An end tag inside a unit ended: whether the unit did.
        @inline(__always)
        private mutating func endTagEndedInUnit() -> Bool {
            depth -= 1
            return depth == 0
        }

        private mutating func unitEnded<E: Error>(
            at index: Int, position: inout ScanPosition, _ body: (UnitBoundary, UnitContext) throws(E) -> Void
        ) throws(E) {
            inUnit = false
            try body(position.end(at: index), context)
        }

        /// The context of a unit whose ancestors are the open elements.
        private mutating func contextForUnit(carried: [UInt8]) -> UnitContext {
            if contextDepth != masks.count || dirty < masks.count {
                var open = prolog
                open += tags
                var close: [UInt8] = []
                for start in tagStarts.reversed() {
                    close += Array("</".utf8)
                    var end = start + 1
                    while end < tags.count && Self.isNameByte(tags[end]) { end += 1 }
                    close += tags[(start + 1)..<end]
                    close.append(UInt8(ascii: ">"))
                }
                context = UnitContext(open: open, close: close)
                contextDepth = masks.count
                dirty = Int.max
            }
            context.carried = carried
            return context
        }

        // MARK: - Markup kept as context

        /// The markup being kept ended just before `index`: its bytes go
        /// where they are kept.
        private mutating func markupEnded(_ bytes: UnsafePointer<UInt8>, at index: Int) {
            keep(bytes, from: tagStart < 0 ? 0 : tagStart, to: index)
            keeping = .none
            tagStart = -1
        }

        /// Keeps the bytes `start..<end` of the chunk if the markup they are
        /// part of is kept.
        private mutating func keep(_ bytes: UnsafePointer<UInt8>, from start: Int, to end: Int) {
            guard end > start else { return }
            let span = UnsafeBufferPointer(start: bytes + start, count: end - start)
            switch keeping {
            case .none: return
            case .tag: tags.append(contentsOf: span)
            case .prolog: prolog.append(contentsOf: span)
            case .pending: pending.append(contentsOf: span)
            }
            tagStart = -1
        }

        /// The kind of the markup being kept is known: its bytes from earlier
        /// chunks go to `target`, and so will the rest.
        private mutating func decide(_ target: Keep) {
            guard keeping == .pending else { return }
            keeping = target
            // Usually no bytes are pending (the markup started in this chunk).
            guard !pending.isEmpty else { return }
            switch target {
            case .tag: tags += pending
            case .prolog: prolog += pending
            case .none, .pending: break
            }
            pending.removeAll(keepingCapacity: true)
        }

        /// A byte after `<!`: `--` starts a comment, `[CDATA[` a CDATA
        /// section, `DOCTYPE` the document type declaration.
        private mutating func bang(_ byte: UInt8) {
            let comment = Self.commentOpening
            let cdata = Self.cdataOpening
            let doctype = Self.doctypeOpening
            if progress < 2 && byte == comment[progress] && (progress == 0 || bangKind == 1) {
                bangKind = 1
            } else if progress < 7 && byte == cdata[progress] && (progress == 0 || bangKind == 2) {
                bangKind = 2
            } else if progress < 7 && byte == doctype[progress] && (progress == 0 || bangKind == 3) {
                bangKind = 3
            } else {
                // Malformed: read on to the next `>`.
                mode = .doctype
                subset = .malformed
                decide(.none)
                return
            }
            progress += 1
            switch (bangKind, progress) {
            case (1, 2):
                mode = .comment
                progress = 0
                decide(.none)
            case (2, 7):
                mode = .cdata
                progress = 0
                decide(.none)
            case (3, 7):
                mode = .doctype
                subset = .outside
                decide(rootSeen ? .none : .prolog)
            default: break
            }
        }

        /// Which of `--` (1), `[CDATA[` (2), `DOCTYPE` (3) the bytes after `<!`
        /// match.
        private var bangKind = 0
        private static let commentOpening = Array("--".utf8)
        private static let cdataOpening = Array("[CDATA[".utf8)
        private static let doctypeOpening = Array("DOCTYPE".utf8)

        /// Where a DOCTYPE declaration is.
        private enum Subset {
            /// Before its internal subset; inside it, between declarations;
            /// in a declaration; in a comment; in a processing instruction;
            /// a malformed `<!`, read to the next `>`.
            case outside, inside, declaration, comment, instruction, malformed
        }
        private var subset = Subset.outside
        /// The state to go back to after a quoted literal.
        private var afterQuote = Subset.outside

        /// A byte of the DOCTYPE; returns whether it ended it.
        private mutating func doctype(_ byte: UInt8) -> Bool {
            if quote != 0 {
                if byte == quote { quote = 0 }
                return false
            }
            switch subset {
            case .malformed:
                return byte == UInt8(ascii: ">")
            case .outside:
                switch byte {
                case UInt8(ascii: "\""), UInt8(ascii: "'"): quote = byte
                case UInt8(ascii: "["): subset = .inside
                case UInt8(ascii: ">"): return true
                default: break
                }
            case .inside:
                switch byte {
                case UInt8(ascii: "]"): subset = .outside
                case UInt8(ascii: "<"): progress = 1
                case UInt8(ascii: "!") where progress == 1: progress = 2
                case UInt8(ascii: "?") where progress == 1: subset = .instruction
                case UInt8(ascii: "-") where progress == 2: progress = 3
                case UInt8(ascii: "-") where progress == 3:
                    subset = .comment
                    progress = 0
                default:
                    if progress >= 2 { subset = .declaration }
                    progress = 0
                }
            case .declaration:
                switch byte {
                case UInt8(ascii: "\""), UInt8(ascii: "'"): quote = byte
                case UInt8(ascii: ">"): subset = .inside
                default: break
                }
            case .comment:
                progress =
                    byte == UInt8(ascii: "-")
                    ? min(progress + 1, 2) : (byte == UInt8(ascii: ">") && progress == 2 ? 3 : 0)
                if progress == 3 {
                    subset = .inside
                    progress = 0
                }
            case .instruction:
                if byte == UInt8(ascii: ">") && progress == 1 {
                    subset = .inside
                    progress = 0
                } else {
                    progress = byte == UInt8(ascii: "?") ? 1 : 0
                }
            }
            return false
        }
    }
}
