/// A custom date format such as `M/d/yyyy H-mm-ss`, read with the POSIX
/// locale (English month names) in UTC unless the pattern has a zone.
///
/// Letters (Unicode date pattern subset): `yyyy` year, `yy` two-digit year
/// (2000–2099), `M`/`MM` month, `MMM` month abbreviation, `MMMM` month name,
/// `d`/`dd` day, `H`/`HH` hour 0–23, `h`/`hh` hour 1–12 with `a` (AM/PM), `m`/`mm`
/// minute, `s`/`ss` second, `S…` fraction (any count), runs of `Z`, `X` or `x`: zone
/// offset (`+0200`, `+02:00`, `Z`), `EEE`/`EEEE` day name (ignored); text in
/// single quotes and any other character match themselves.
struct DatePattern: Sendable, Equatable {
    enum Token: Sendable, Equatable {
        case year(Int)
        case month(Int)
        case day, hour24, hour12, minute, second, fraction, zone, amPm, dayName
        case literal(UInt8)
    }

    let tokens: [Token]
    let text: String

    /// Compiles `pattern`; `nil` when it has no year, month and day.
    init?(_ pattern: String) {
        var tokens: [Token] = []
        let chars = Array(pattern.utf8)
        var index = 0
        while index < chars.count {
            let char = chars[index]
            if char == UInt8(ascii: "'") {
                index += 1
                while index < chars.count && chars[index] != UInt8(ascii: "'") {
                    tokens.append(.literal(chars[index]))
                    index += 1
                }
                index += 1
                continue
            }
            var run = 1
            while index + run < chars.count && chars[index + run] == char { run += 1 }
            switch char {
            case UInt8(ascii: "y"): tokens.append(.year(run == 2 ? 2 : 4))
            case UInt8(ascii: "M"): tokens.append(.month(run))
            case UInt8(ascii: "d"): tokens.append(.day)
            case UInt8(ascii: "H"): tokens.append(.hour24)
            case UInt8(ascii: "h"): tokens.append(.hour12)
            case UInt8(ascii: "m"): tokens.append(.minute)
            case UInt8(ascii: "s"): tokens.append(.second)
            case UInt8(ascii: "S"): tokens.append(.fraction)
            case UInt8(ascii: "Z"), UInt8(ascii: "X"), UInt8(ascii: "x"): tokens.append(.zone)
            case UInt8(ascii: "a"): tokens.append(.amPm)
            case UInt8(ascii: "E"): tokens.append(.dayName)
            default:
                for _ in 0..<run { tokens.append(.literal(char)) }
            }
            index += run
        }
        let hasYear = tokens.contains { if case .year = $0 { return true } else { return false } }
        let hasMonth = tokens.contains { if case .month = $0 { return true } else { return false } }
        guard hasYear, hasMonth, tokens.contains(.day) else { return nil }
        self.tokens = tokens
        text = pattern
    }

    private static let months = ["jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"]
    private static let monthNames = [
        "january", "february", "march", "april", "may", "june", "july", "august",
        "september", "october", "november", "december",
    ]

    /// The moment `text` denotes, or `nil` when it does not match.
    func parse(_ text: ArraySlice<UInt8>) -> DateText.Moment? {
        let bytes = Array(text)
        var index = 0
        var year = 1970
        var month = 1
        var day = 1
        var hour = 0
        var minute = 0
        var second = 0
        var micros = 0
        var offset = 0
        var pm: Bool?
        func digits(max: Int) -> Int? {
            var value = 0
            var count = 0
            while count < max, index < bytes.count, bytes[index] >= 0x30, bytes[index] <= 0x39 {
                value = value * 10 + Int(bytes[index] - 0x30)
                index += 1
                count += 1
            }
            return count > 0 ? value : nil
        }
        func letters() -> String {
            var word: [UInt8] = []
            while index < bytes.count, (bytes[index] | 0x20) >= 0x61, (bytes[index] | 0x20) <= 0x7A {
                word.append(bytes[index] | 0x20)
                index += 1
            }
            return String(decoding: word, as: UTF8.self)
        }
        for token in tokens {
            switch token {
            case .year(let width):
                guard let value = digits(max: width == 2 ? 2 : 4) else { return nil }
                year = width == 2 ? 2000 + value : value
            case .month(let width):
                if width >= 3 {
                    let word = letters()
                    guard
                        let found = (width == 3 ? Self.months : Self.monthNames).firstIndex(of: word)
                            ?? Self.monthNames.firstIndex(of: word) ?? Self.months.firstIndex(of: word)
                    else { return nil }
                    month = found + 1
                } else {
                    guard let value = digits(max: 2) else { return nil }
                    month = value
                }
            case .day:
                guard let value = digits(max: 2) else { return nil }
                day = value
            case .hour24, .hour12:
                guard let value = digits(max: 2) else { return nil }
                hour = value
            case .minute:
                guard let value = digits(max: 2) else { return nil }
                minute = value
            case .second:
                guard let value = digits(max: 2) else { return nil }
                second = value
            case .fraction:
                var count = 0
                while index < bytes.count, bytes[index] >= 0x30, bytes[index] <= 0x39 {
                    if count < 6 { micros = micros * 10 + Int(bytes[index] - 0x30) }
                    count += 1
                    index += 1
                }
                guard count > 0 else { return nil }
                micros *= DateText.pow10(max(0, 6 - count))
            case .zone:
                guard index < bytes.count else { return nil }
                if bytes[index] == UInt8(ascii: "Z") {
                    index += 1
                } else {
                    guard bytes[index] == UInt8(ascii: "+") || bytes[index] == UInt8(ascii: "-") else { return nil }
                    let sign = bytes[index] == UInt8(ascii: "-") ? -1 : 1
                    index += 1
                    guard let hours = digits(max: 2) else { return nil }
                    if index < bytes.count, bytes[index] == UInt8(ascii: ":") { index += 1 }
                    let minutes = digits(max: 2) ?? 0
                    offset = sign * (hours * 3600 + minutes * 60)
                }
            case .amPm:
                let word = letters()
                guard word == "am" || word == "pm" else { return nil }
                pm = word == "pm"
            case .dayName:
                guard !letters().isEmpty else { return nil }
            case .literal(let char):
                guard index < bytes.count, bytes[index] == char else { return nil }
                index += 1
            }
        }
        guard index == bytes.count else { return nil }
        if let pm {
            guard (1...12).contains(hour) else { return nil }
            hour = hour % 12 + (pm ? 12 : 0)
        }
        guard (1...12).contains(month), day >= 1, day <= DateText.daysIn(month: month, year: year), hour < 24,
            minute < 60,
            second < 61
        else { return nil }
        let days = Int64(DateText.daysFromCivil(year: year, month: month, day: day))
        let seconds = days * 86_400 + Int64(hour * 3600 + minute * 60 + min(second, 59)) - Int64(offset)
        return DateText.Moment(seconds: seconds, microseconds: micros)
    }
}
