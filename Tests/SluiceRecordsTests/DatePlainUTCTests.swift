#if canImport(Glibc)
@_spi(Machinery) import SluiceRecords
import Glibc
#endif
@testable import SluiceRecords
import SluiceTestSupport
import Testing

/// `DateText.withPlainUTC` skips the general parse for dates already all but
/// in stored form; it must agree with `parseISO` + `format` on every input it
/// accepts, and leave everything else to them.
@Suite struct DatePlainUTCTests {
    func plain(_ text: String) -> String? {
        DateText.withPlainUTC(Array(text.utf8)[...]) { String(decoding: $0, as: UTF8.self) }
    }

    func general(_ text: String) -> String? {
        guard let moment = DateText.parseISO(Array(text.utf8)), DateText.isWritable(moment) else { return nil }
        return String(decoding: DateText.format(moment), as: UTF8.self)
    }

    /// `dddd-dd-dd`, `T` or a space, `dd:dd:dd` with seconds below 60, then
    /// `Z`, `z` or nothing.
    func hasPlainShape(_ text: String) -> Bool {
        let bytes = Array(text.utf8)
        let template = Array("dddd-dd-ddSdd:dd:dd".utf8)
        guard bytes.count == 19 || (bytes.count == 20 && (bytes[19] == UInt8(ascii: "Z") || bytes[19] == UInt8(ascii: "z")))
        else { return false }
        for (byte, wanted) in zip(bytes, template) {
            switch wanted {
            case UInt8(ascii: "d"): if !(0x30...0x39).contains(byte) { return false }
            case UInt8(ascii: "S"): if byte != UInt8(ascii: "T") && byte != UInt8(ascii: " ") { return false }
            default: if byte != wanted { return false }
            }
        }
        return bytes[17] < UInt8(ascii: "6")
    }

    @Test func acceptsOnlyPlainUTCDateTimes() {
        #expect(plain("2024-02-29T23:59:59Z") == "2024-02-29 23:59:59")
        #expect(plain("2024-02-29 23:59:59") == "2024-02-29 23:59:59")
        #expect(plain("0001-01-01T00:00:00z") == "0001-01-01 00:00:00")
        // Invalid dates, which the general parse rejects too.
        #expect(plain("2023-02-29T00:00:00Z") == nil && general("2023-02-29T00:00:00Z") == nil)
        #expect(plain("0000-12-31T00:00:00Z") == nil && general("0000-12-31T00:00:00Z") == nil)
        // Valid, but for the general parse: a leap second, zones, fractions, no time.
        #expect(plain("2016-12-31T23:59:60Z") == nil && general("2016-12-31T23:59:60Z") == "2016-12-31 23:59:59")
        #expect(plain("2015-01-01T00:30:00+02:00") == nil)
        #expect(plain("2011-08-17T19:49:15.197") == nil)
        #expect(plain("2021-08-01") == nil)
    }

    @Test func agreesWithTheGeneralParseOnRandomNearMisses() {
        var random = SplitMix(seed: 7)
        func pick(_ choices: [String]) -> String { choices[Int(random.next() % UInt64(choices.count))] }
        func digits(_ count: Int, below limit: UInt64) -> String {
            let value = String(random.next() % limit)
            return String(repeating: "0", count: max(0, count - value.count)) + value
        }
        var accepted = 0
        for _ in 0..<50_000 {
            var text = digits(4, below: 10_000) + "-" + digits(2, below: 14) + "-" + digits(2, below: 33)
                + pick(["T", " ", "t", "x"]) + digits(2, below: 26) + ":" + digits(2, below: 62) + ":" + digits(2, below: 62)
                + pick(["", "Z", "z", "Z", "+01:00", ".5Z", "Q"])
            if random.next() % 8 == 0 {
                var bytes = Array(text.utf8)
                bytes[Int(random.next() % UInt64(bytes.count))] = pick(["-", ":", "9", "a", " "]).utf8.first!
                text = String(decoding: bytes, as: UTF8.self)
            }
            let fast = plain(text)
            if let fast {
                accepted += 1
                #expect(fast == general(text), "\(text)")
            } else {
                #expect(general(text) == nil || !hasPlainShape(text), "\(text) took the general parse")
            }
        }
        #expect(accepted > 5_000)
    }
}

/// `ValueConversion.shortDecimal` reads short decimals without `strtod`; it
/// must give the same double, bit for bit, on everything it accepts.
@Suite struct ShortDecimalTests {
    func strtodValue(_ text: String) -> Double? {
        ValueConversion.double(Array(text.utf8)[...])
    }

    @Test func acceptsOnlyShortPlainDecimals() {
        #expect(ValueConversion.shortDecimal(Array("76.2".utf8)[...]) == 76.2)
        #expect(ValueConversion.shortDecimal(Array("-0".utf8)[...])?.sign == .minus)
        #expect(ValueConversion.shortDecimal(Array("123456789012345".utf8)[...]) == 123_456_789_012_345)
        for text in ["1234567890123456", "1e5", "1.", ".5", "1.2.3", "", "-", "+1", "0x10", "1,5"] {
            #expect(ValueConversion.shortDecimal(Array(text.utf8)[...]) == nil, "\(text)")
        }
    }

    @Test func agreesWithStrtodBitForBit() {
        var random = SplitMix(seed: 11)
        var accepted = 0
        for _ in 0..<100_000 {
            let digits = Int(random.next() % 18) + 1
            var text = random.next() % 4 == 0 ? "-" : ""
            let point = Int(random.next() % UInt64(digits + 2))
            for position in 0..<digits {
                if position == point && position > 0 { text += "." }
                text += String(random.next() % 10)
            }
            let bytes = Array(text.utf8)[...]
            guard let fast = ValueConversion.shortDecimal(bytes) else { continue }
            accepted += 1
            var end: UnsafeMutablePointer<CChar>?
            let slow = text.withCString { strtod($0, &end) }
            #expect(fast.bitPattern == slow.bitPattern, "\(text)")
        }
        #expect(accepted > 50_000)
    }
}

/// `ValueConversion.plainCell` converts the common values from their bytes
/// in place; whatever it returns must equal what the general conversion
/// stores for the same node and type.
@Suite struct PlainCellTests {
    static let values = [
        "", "12", "-7", "+3", "007", "1.5", "-0.25", "1e3", "12.0", " 12", "9223372036854775807", "9223372036854775808",
        "2024-01-02T03:04:05Z", "2024-01-02 03:04:05", "2024-02-30T00:00:00Z", "2024-01-02T03:04:05+01:00", "1388349428",
        "true", "no", "abc", "straße", "0.1", "123456789012345.6", "aGVsbG8=",
    ]
    static let kinds: [RecordTree.Kind] = [.string, .number, .true, .false, .null, .element, .attribute]

    /// The stored form of a cell: its case and, for text, its bytes.
    func stored(_ cell: Cell, _ arena: RowArena) -> String {
        switch cell {
        case .text, .blob: return "\(cell)".prefix(4) + ":" + arena.withText(cell) { String(decoding: $0, as: UTF8.self) }
        case .real(let value): return "real:\(value.bitPattern)"
        default: return "\(cell)"
        }
    }

    @Test func agreesWithTheGeneralConversion() {
        var fast = 0
        for value in Self.values {
            for kind in Self.kinds {
                var tree = RecordTree()
                Array(value.utf8).withUnsafeBufferPointer { bytes in
                    Array("v".utf8).withUnsafeBufferPointer { name in _ = tree.open(kind, name: name, value: bytes) }
                }
                if kind == .element { tree.close() }
                for type in AttributeType.allCases {
                    var plainArena = RowArena(columnCount: 1)
                    guard let plain = ValueConversion.plainCell(tree, 0, type, into: &plainArena) else { continue }
                    fast += 1
                    var generalArena = RowArena(columnCount: 1)
                    switch ValueConversion.generalCell(tree, 0, ValueRule(type: type), into: &generalArena) {
                    case .success(let general):
                        #expect(stored(plain, plainArena) == stored(general, generalArena), "\(kind) \(value) as \(type)")
                    case .failure(let problem):
                        Issue.record("\(kind) \(value) as \(type): fast \(stored(plain, plainArena)), general failed: \(problem)")
                    }
                }
            }
        }
        #expect(fast > 150)
    }
}
