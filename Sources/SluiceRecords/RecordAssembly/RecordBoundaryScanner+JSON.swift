import SluiceParsers

extension RecordBoundaryScanner {
    /// The JSON side of the scanner: outside units, a byte-by-byte reading
    /// of the structure that follows record paths as ``RecordAssembler``
    /// does (containers, keys, which path a value is on); inside a unit, only
    /// its depth and whether a string is open, tested 16 bytes at a time.
    struct JSONScan {
        /// Where the scan is.
        private enum Mode {
            /// Outside units, between tokens.
            case between
            /// Outside units, in a string value; in a key.
            case string, key
            /// Outside units, in a number or literal.
            case scalar
            /// In a unit that is an object or an array, or a string.
            case container
            /// In a unit that is a number or a literal.
            case scalarUnit
        }

        /// One open container outside units.
        private struct Frame {
            var isArray: Bool
            /// Routes whose path goes on below this container.
            var own: UInt64
            /// Routes whose path reaches the next value (an array's
            /// elements; an object's current member).
            var childMask: UInt64
            /// An object waiting for a key.
            var expectsKey: Bool
        }

        private let paths: [[RecordPath.Component]]
        private let allRoutes: UInt64
        /// Per path: the JSON around a value on it, and what closes that.
        private let wrappers: [(open: [UInt8], close: [UInt8])]
        private var mode = Mode.between
        private var frames: [Frame] = []
        /// The raw bytes of the key being read, at most `keyLimit`.
        private var key: [UInt8] = []
        private let keyLimit: Int
        /// The byte after a backslash in a string comes next.
        private var escaped = false
        /// Depth of containers in the current unit; whether it is in a string.
        private var depth = 0
        private var inString = false
        /// The path of the current (or last) unit.
        private var route = -1

        /// Follows `paths`; with `multipleValues` every top-level value is a
        /// unit whatever the paths (each parses alone as one of the lines).
        init(paths: [RecordPath], multipleValues: Bool) {
            topLevel = multipleValues
            if multipleValues {
                self.paths = [[]]
                wrappers = [([], [])]
            } else {
                self.paths = paths.map(\.components)
                wrappers = paths.map { Self.wrapper($0.components) }
            }
            allRoutes = self.paths.count >= 64 ? UInt64.max : (UInt64(1) << UInt64(self.paths.count)) - 1
            // A key longer than every name, escaped (six bytes a character), matches none.
            let longest = paths.flatMap(\.components).map { if case .name(let n) = $0 { n.count } else { 0 } }
            keyLimit = 6 * (longest.max() ?? 0) + 8
        }

        /// Every unit is a top-level value (`multipleValues`): its context is
        /// empty, made without reading `wrappers` (no retain a boundary).
        private let topLevel: Bool

        /// The context of the current (or last) unit.
        var context: UnitContext {
            route >= 0 && !topLevel
                ? UnitContext(open: wrappers[route].open, close: wrappers[route].close) : UnitContext()
        }

        /// `{"key":[` for `$.key[*]`, and `]}`.
        private static func wrapper(_ components: [RecordPath.Component]) -> (open: [UInt8], close: [UInt8]) {
            var open: [UInt8] = []
            var close: [UInt8] = []
            for component in components {
                switch component {
                case .name(let name):
                    open.append(UInt8(ascii: "{"))
                    appendQuoted(name, to: &open)
                    open.append(UInt8(ascii: ":"))
                    close.insert(UInt8(ascii: "}"), at: 0)
                case .anyIndex, .anyName:
                    open.append(UInt8(ascii: "["))
                    close.insert(UInt8(ascii: "]"), at: 0)
                }
            }
            return (open, close)
        }

        /// `name` as a JSON string.
        private static func appendQuoted(_ name: [UInt8], to output: inout [UInt8]) {
            let hex = Array("0123456789abcdef".utf8)
            output.append(UInt8(ascii: "\""))
            for byte in name {
                if byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\") {
                    output.append(contentsOf: [UInt8(ascii: "\\"), byte])
                } else if byte < 0x20 {
                    output.append(contentsOf: Array("\\u00".utf8) + [hex[Int(byte >> 4)], hex[Int(byte & 15)]])
                } else {
                    output.append(byte)
                }
            }
            output.append(UInt8(ascii: "\""))
        }

        // MARK: - Scanning

        /// Scans `count` bytes at `bytes`, handing each boundary to `body`.
        mutating func scan<E: Error>(
            _ bytes: UnsafePointer<UInt8>, count: Int, position: inout ScanPosition,
            _ body: (UnitBoundary, UnitContext) throws(E) -> Void
        ) throws(E) {
            var index = 0
            while index < count {
                switch mode {
                case .container:
                    index = scanUnit(bytes, from: index, count: count, position: &position)
                    if mode != .container { try body(position.end(at: index), context) }
                case .scalarUnit:
                    while index < count && !Self.endsScalar(bytes[index]) { index += 1 }
                    if index < count {
                        mode = .between
                        try body(position.end(at: index), context)
                    }
                case .between, .string, .key, .scalar:
                    let start = scanOutside(bytes, from: index, count: count, position: &position)
                    index = start + 1
                    if start < count { try body(position.start(at: start), context) }
                }
            }
        }

        /// Ends the input: a number or literal unit ends with it; anything
        /// else still open is an error.
        mutating func finish(position: ScanPosition) throws(ParseError) -> UnitBoundary? {
            switch mode {
            case .scalarUnit:
                mode = .between
                return UnitBoundary(
                    kind: .end, offsetInChunk: 0, byteOffset: position.chunkStart, line: 0, column: 0,
                    ordinal: position.ordinal)
            case .container:
                throw ParseError(
                    .malformed(inString ? "the input ends in a string" : "the input ends in an object or array"),
                    at: position.endLocation())
            case .string, .key:
                throw ParseError(.malformed("the input ends in a string"), at: position.endLocation())
            case .between, .scalar:
                guard frames.isEmpty else {
                    throw ParseError(.malformed("the input ends in an object or array"), at: position.endLocation())
                }
                return nil
            }
        }

        /// UTF-8's byte order mark.
        private static let byteOrderMark: [UInt8] = [0xEF, 0xBB, 0xBF]

        /// Whether `byte` ends a number or literal (white space or structure).
        @inline(__always)
        private static func endsScalar(_ byte: UInt8) -> Bool {
            switch byte {
            case 0x20, 0x09, 0x0A, 0x0D, 0x2C, 0x3A, 0x22, 0x5B, 0x5D, 0x7B, 0x7D: return true
            default: return false
            }
        }

        /// Reads bytes outside units from `start` until a unit starts
        /// (returns the offset of its first byte, with `mode` changed) or the
        /// chunk ends (returns `count`).
        private mutating func scanOutside(
            _ bytes: UnsafePointer<UInt8>, from start: Int, count: Int, position: inout ScanPosition
        ) -> Int {
            var index = start
            while index < count {
                let byte = bytes[index]
                if byte == 0x0A { position.newline(at: index) }
                switch mode {
                case .string, .key:
                    if escaped {
                        escaped = false
                    } else if byte == UInt8(ascii: "\\") {
                        escaped = true
                    } else if byte == UInt8(ascii: "\"") {
                        if mode == .key { keyEnded() }
                        mode = .between
                        index += 1
                        continue
                    }
                    if mode == .key && key.count < keyLimit { key.append(byte) }
                    index += 1
                    continue
                case .scalar:
                    if !Self.endsScalar(byte) {
                        index += 1
                        continue
                    }
                    mode = .between
                case .between, .container, .scalarUnit:
                    break
                }
                let offset = position.chunkStart + Int64(index)
                if offset < 3 && byte == Self.byteOrderMark[Int(offset)] {
                    // The JSON parser skips a byte order mark, and counts columns after it.
                    position.lineStart = offset + 1
                    index += 1
                    continue
                }
                switch byte {
                case 0x20, 0x09, 0x0A, 0x0D, UInt8(ascii: ":"):
                    break
                case UInt8(ascii: ","):
                    if !frames.isEmpty && !frames[frames.count - 1].isArray {
                        frames[frames.count - 1].expectsKey = true
                    }
                case UInt8(ascii: "}"), UInt8(ascii: "]"):
                    if !frames.isEmpty { frames.removeLast() }
                case UInt8(ascii: "\"") where !frames.isEmpty && frames[frames.count - 1].expectsKey:
                    frames[frames.count - 1].expectsKey = false
                    key.removeAll(keepingCapacity: true)
                    mode = .key
                default:
                    if let unitRoute = completeRoute(valueMask()) {
                        route = unitRoute
                        switch byte {
                        case UInt8(ascii: "{"), UInt8(ascii: "["):
                            mode = .container
                            depth = 1
                            inString = false
                        case UInt8(ascii: "\""):
                            mode = .container
                            depth = 0
                            inString = true
                        default:
                            mode = .scalarUnit
                        }
                        return index
                    }
                    switch byte {
                    case UInt8(ascii: "{"), UInt8(ascii: "["): open(isArray: byte == UInt8(ascii: "["))
                    case UInt8(ascii: "\""): mode = .string
                    default: mode = .scalar
                    }
                }
                index += 1
            }
            return index
        }

        /// The routes whose path leads to the value starting now.
        private func valueMask() -> UInt64 {
            guard let frame = frames.last else { return allRoutes }
            return frame.expectsKey ? 0 : frame.childMask
        }

        /// The first route in `mask` whose path ends at the current depth.
        private func completeRoute(_ mask: UInt64) -> Int? {
            guard mask != 0 else { return nil }
            for index in 0..<paths.count where mask & (1 << UInt64(index)) != 0 && paths[index].count == frames.count {
                return index
            }
            return nil
        }

        /// A container outside units opens.
        private mutating func open(isArray: Bool) {
            let mask = valueMask()
            let level = frames.count
            var own: UInt64 = 0
            var childMask: UInt64 = 0
            for index in 0..<paths.count where mask & (1 << UInt64(index)) != 0 && paths[index].count > level {
                own |= 1 << UInt64(index)
                if isArray && paths[index][level] == .anyIndex { childMask |= 1 << UInt64(index) }
            }
            frames.append(Frame(isArray: isArray, own: own, childMask: childMask, expectsKey: !isArray))
        }

        /// A key outside units ends: which routes its value is on.
        private mutating func keyEnded() {
            let level = frames.count
            let own = frames[level - 1].own
            var mask: UInt64 = 0
            if own != 0 && key.count < keyLimit {
                let name = key.contains(UInt8(ascii: "\\")) ? Self.unescaped(key) : key
                for index in 0..<paths.count where own & (1 << UInt64(index)) != 0 {
                    if case .name(let wanted) = paths[index][level - 1], wanted == name { mask |= 1 << UInt64(index) }
                }
            }
            frames[level - 1].childMask = mask
        }

        /// The text of a JSON string's inside (escapes decoded, `\u` pairs
        /// joined; what is malformed is kept as it is).
        static func unescaped(_ raw: [UInt8]) -> [UInt8] {
            var output: [UInt8] = []
            var index = 0
            func hex4(_ at: Int) -> UInt32? {
                guard at + 4 <= raw.count else { return nil }
                var value: UInt32 = 0
                for byte in raw[at..<(at + 4)] {
                    guard let digit = Int(String(UnicodeScalar(byte)), radix: 16) else { return nil }
                    value = value << 4 | UInt32(digit)
                }
                return value
            }
            while index < raw.count {
                let byte = raw[index]
                guard byte == UInt8(ascii: "\\"), index + 1 < raw.count else {
                    output.append(byte)
                    index += 1
                    continue
                }
                let next = raw[index + 1]
                index += 2
                switch next {
                case UInt8(ascii: "b"): output.append(0x08)
                case UInt8(ascii: "f"): output.append(0x0C)
                case UInt8(ascii: "n"): output.append(0x0A)
                case UInt8(ascii: "r"): output.append(0x0D)
                case UInt8(ascii: "t"): output.append(0x09)
                case UInt8(ascii: "u"):
                    guard var scalar = hex4(index) else {
                        output.append(contentsOf: [byte, next])
                        continue
                    }
                    index += 4
                    if (0xD800..<0xDC00).contains(scalar), index + 1 < raw.count, raw[index] == UInt8(ascii: "\\"),
                        raw[index + 1] == UInt8(ascii: "u"), let low = hex4(index + 2), (0xDC00..<0xE000).contains(low)
                    {
                        scalar = 0x10000 + ((scalar - 0xD800) << 10) + (low - 0xDC00)
                        index += 6
                    }
                    output.append(
                        contentsOf: Array(String(UnicodeScalar(scalar).map(Character.init) ?? "\u{FFFD}").utf8))
                default: output.append(next)
                }
            }
            return output
        }

        // MARK: - Inside a unit

        /// Reads the current unit from `start`, 16 bytes at a time, until it
        /// ends (returns the offset past its last byte, with `mode` changed)
        /// or the chunk does (returns `count`). Blocks with no bracket,
        /// newline or backslash (the common case) only toggle whether a
        /// string is open, by the parity of their quotes. A block without a
        /// backslash settles its strings at once (the bytes after an odd
        /// number of quotes are inside one) and looks only at the brackets
        /// outside strings. Masks stay a byte per input byte, in two 64-bit
        /// lanes: Swift has no movemask, and packing them into bits cost more
        /// than all the rest.
        private mutating func scanUnit(
            _ bytes: UnsafePointer<UInt8>, from start: Int, count: Int, position: inout ScanPosition
        ) -> Int {
            typealias Bytes = SIMD16<UInt8>
            typealias Lanes = SIMD2<UInt64>
            var index = start
            while index < count {
                if escaped {
                    escaped = false
                    if bytes[index] == 0x0A { position.newline(at: index) }
                    index += 1
                    continue
                }
                if depth != 0 {
                    let plain = Self.skipPlainBlocks(bytes, from: index, count: count)
                    index = plain.end
                    if plain.oddQuotes { inString.toggle() }
                    if index == count { break }
                }
                guard index + 16 <= count else {
                    if let end = unitByte(bytes, at: index, position: &position) { return end }
                    index += 1
                    continue
                }
                let block = UnsafeRawPointer(bytes + index).loadUnaligned(as: Bytes.self)
                let folded = block | Bytes(repeating: 0x20)
                let quoteBytes = block .== Bytes(repeating: 0x22)
                let eventBytes =
                    (folded .== Bytes(repeating: 0x7B)) .| (folded .== Bytes(repeating: 0x7D))
                    .| (block .== Bytes(repeating: 0x0A))
                let backslashBytes = block .== Bytes(repeating: 0x5C)
                let quotes = unsafeBitCast(quoteBytes, to: Lanes.self)
                let backslashes = unsafeBitCast(backslashBytes, to: Lanes.self)
                if backslashes[0] | backslashes[1] != 0 || depth == 0 {
                    let all = unsafeBitCast(quoteBytes .| eventBytes .| backslashBytes, to: Lanes.self)
                    if let end = scanEvents(bytes, block: index, all, &position) { return end }
                    index &+= 16
                    continue
                }
                // Byte i of `inside` set: byte i follows an odd number of quotes (with the open string).
                let open: UInt64 = inString ? ~0 : 0
                let inside0 = Self.prefixParity(quotes[0]) ^ open
                let carry = UInt64(bitPattern: Int64(bitPattern: inside0) >> 63)
                let inside1 = Self.prefixParity(quotes[1]) ^ carry
                let events = unsafeBitCast(eventBytes, to: Lanes.self)
                let outside0 = events[0] & ~inside0 & 0x8080_8080_8080_8080
                let outside1 = events[1] & ~inside1 & 0x8080_8080_8080_8080
                for lane in 0..<2 {
                    var mask = lane == 0 ? outside0 : outside1
                    while mask != 0 {
                        let at = index &+ lane &* 8 &+ mask.trailingZeroBitCount >> 3
                        mask &= mask &- 1
                        let byte = bytes[at]
                        if byte == 0x0A {
                            position.newline(at: at)
                        } else if byte | 0x20 == UInt8(ascii: "{") {
                            depth &+= 1
                        } else {
                            depth &-= 1
                            if depth == 0 {
                                inString = false
                                mode = .between
                                return at + 1
                            }
                        }
                    }
                }
                inString = inside1 >> 63 == 1
                index &+= 16
            }
            return index
        }

        /// Skips the blocks of 16 bytes from `start` that hold no bracket,
        /// newline or backslash (most of them): only their quotes matter, by
        /// their parity. Returns where the first other block starts (or
        /// fewer than 16 bytes are left), and whether the quotes skipped are
        /// odd in number.
        @inline(__always)
        private static func skipPlainBlocks(
            _ bytes: UnsafePointer<UInt8>, from start: Int, count: Int
        ) -> (end: Int, oddQuotes: Bool) {
            typealias Bytes = SIMD16<UInt8>
            typealias Lanes = SIMD2<UInt64>
            var index = start
            // The quote bytes (0xFF each) xor-ed together.
            var quotes = Lanes()
            while index &+ 16 <= count {
                let block = UnsafeRawPointer(bytes + index).loadUnaligned(as: Bytes.self)
                let folded = block | Bytes(repeating: 0x20)
                let unusual = unsafeBitCast(
                    (folded .== Bytes(repeating: 0x7B)) .| (folded .== Bytes(repeating: 0x7D))
                        .| (block .== Bytes(repeating: 0x0A)) .| (block .== Bytes(repeating: 0x5C)), to: Lanes.self)
                if unusual[0] | unusual[1] != 0 { break }
                quotes ^= unsafeBitCast(block .== Bytes(repeating: 0x22), to: Lanes.self)
                index &+= 16
            }
            var parity = quotes[0] ^ quotes[1]
            parity ^= parity >> 32
            parity ^= parity >> 16
            parity ^= parity >> 8
            return (index, parity & 1 == 1)
        }

        /// Byte i of the result is 0xFF when bytes 0...i of `flags` (each
        /// 0x00 or 0xFF) hold an odd number of 0xFF.
        @inline(__always)
        private static func prefixParity(_ flags: UInt64) -> UInt64 {
            var parity = flags
            parity ^= parity << 8
            parity ^= parity << 16
            parity ^= parity << 32
            return parity
        }

        /// Handles the bytes flagged in `flags` (a byte 0xFF each) of the
        /// block at `index` one by one (a block with a backslash, or a string
        /// unit's); returns the unit's end when it ends.
        private mutating func scanEvents(
            _ bytes: UnsafePointer<UInt8>, block index: Int, _ flags: SIMD2<UInt64>, _ position: inout ScanPosition
        ) -> Int? {
            var skip = -1
            for lane in 0..<2 {
                var mask = flags[lane] & 0x8080_8080_8080_8080
                while mask != 0 {
                    let at = index &+ lane &* 8 &+ mask.trailingZeroBitCount >> 3
                    mask &= mask &- 1
                    guard at != skip else { continue }
                    if let end = unitByte(bytes, at: at, position: &position) { return end }
                    if escaped && at + 1 < index + 16 {
                        // The escaped byte is in this block: it is no event.
                        escaped = false
                        skip = at + 1
                        if bytes[skip] == 0x0A { position.newline(at: skip) }
                    }
                }
            }
            return nil
        }

        /// Handles one byte of a unit; returns the unit's end when it ends.
        @inline(__always)
        private mutating func unitByte(_ bytes: UnsafePointer<UInt8>, at index: Int, position: inout ScanPosition)
            -> Int?
        {
            let byte = bytes[index]
            if byte == 0x0A {
                position.newline(at: index)
            } else if inString {
                if byte == UInt8(ascii: "\"") {
                    inString = false
                    if depth == 0 {
                        mode = .between
                        return index + 1
                    }
                } else if byte == UInt8(ascii: "\\") {
                    escaped = true
                }
            } else if byte == UInt8(ascii: "\"") {
                inString = true
            } else if byte | 0x20 == UInt8(ascii: "{") {
                depth += 1
            } else if byte | 0x20 == UInt8(ascii: "}") {
                depth -= 1
                if depth == 0 {
                    mode = .between
                    return index + 1
                }
            }
            return nil
        }

    }
}
