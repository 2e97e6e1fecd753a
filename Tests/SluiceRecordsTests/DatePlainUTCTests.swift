import SluiceTestSupport
import Testing

@testable import SluiceRecords

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
        guard
            bytes.count == 19
                || (bytes.count == 20 && (bytes[19] == UInt8(ascii: "Z") || bytes[19] == UInt8(ascii: "z")))
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
            var text =
                digits(4, below: 10_000) + "-" + digits(2, below: 14) + "-" + digits(2, below: 33)
                + pick(["T", " ", "t", "x"]) + digits(2, below: 26) + ":" + digits(2, below: 62) + ":"
                + digits(2, below: 62)
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
