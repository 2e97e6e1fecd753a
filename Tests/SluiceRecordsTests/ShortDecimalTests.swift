import SluiceTestSupport
import Testing

@testable import SluiceRecords

#if canImport(Glibc)
    @_spi(Machinery) import SluiceRecords
    import Glibc
#endif

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
