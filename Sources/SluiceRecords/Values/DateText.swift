/// Parses ISO-8601 dates and writes them in sluice's stored form: UTC text
/// `YYYY-MM-DD HH:MM:SS[.ffffff]` (SQLite's own date-time form), which sorts
/// in time order. Never uses the machine's locale or time zone.
package enum DateText {
    /// A moment as seconds since 1970-01-01 UTC plus microseconds.
    struct Moment: Equatable {
        var seconds: Int64
        var microseconds: Int
    }

    /// Parses `YYYY-MM-DD`, optionally followed by `T` or a space and
    /// `hh:mm[:ss[.fraction]]`, optionally followed by `Z`, `±hh`, `±hh:mm` or
    /// `±hhmm`. No zone means UTC; fraction digits past the sixth are dropped.
    static func parseISO(_ text: some Collection<UInt8>) -> Moment? {
        let bytes = Array(text)
        var index = 0
        func number(_ digits: Int) -> Int? {
            guard index + digits <= bytes.count else { return nil }
            var value = 0
            for offset in 0..<digits {
                let byte = bytes[index + offset]
                guard byte >= 0x30 && byte <= 0x39 else { return nil }
                value = value * 10 + Int(byte - 0x30)
            }
            index += digits
            return value
        }
        func skip(_ byte: UInt8) -> Bool {
            guard index < bytes.count, bytes[index] == byte else { return false }
            index += 1
            return true
        }
        guard let year = number(4), skip(UInt8(ascii: "-")), let month = number(2), skip(UInt8(ascii: "-")),
            let day = number(2), (1...12).contains(month), day >= 1, day <= daysIn(month: month, year: year)
        else { return nil }
        var hour = 0
        var minute = 0
        var second = 0
        var micros = 0
        var offsetSeconds = 0
        if index < bytes.count && (bytes[index] == UInt8(ascii: "T") || bytes[index] == UInt8(ascii: " ")) {
            index += 1
            guard let h = number(2), skip(UInt8(ascii: ":")), let m = number(2), h < 24, m < 60 else { return nil }
            hour = h
            minute = m
            if skip(UInt8(ascii: ":")) {
                guard let s = number(2), s < 61 else { return nil }
                second = min(s, 59)
                if skip(UInt8(ascii: ".")) || skip(UInt8(ascii: ",")) {
                    var digits = 0
                    while index < bytes.count, bytes[index] >= 0x30, bytes[index] <= 0x39 {
                        if digits < 6 { micros = micros * 10 + Int(bytes[index] - 0x30) }
                        digits += 1
                        index += 1
                    }
                    guard digits > 0 else { return nil }
                    micros *= pow10(max(0, 6 - digits))
                }
            }
            if skip(UInt8(ascii: "Z")) || skip(UInt8(ascii: "z")) {
                offsetSeconds = 0
            } else if index < bytes.count, bytes[index] == UInt8(ascii: "+") || bytes[index] == UInt8(ascii: "-") {
                let sign = bytes[index] == UInt8(ascii: "-") ? -1 : 1
                index += 1
                guard let zoneHours = number(2), zoneHours <= 23 else { return nil }
                var zoneMinutes = 0
                if index < bytes.count {
                    _ = skip(UInt8(ascii: ":"))
                    guard let parsed = number(2), parsed < 60 else { return nil }
                    zoneMinutes = parsed
                }
                offsetSeconds = sign * (zoneHours * 3600 + zoneMinutes * 60)
            }
        }
        guard index == bytes.count else { return nil }
        let days = Int64(daysFromCivil(year: year, month: month, day: day))
        let seconds = days * 86_400 + Int64(hour * 3600 + minute * 60 + second) - Int64(offsetSeconds)
        return Moment(seconds: seconds, microseconds: micros)
    }

    /// Calls `body` with the stored form of `text` when `text` is a UTC
    /// date-time that differs from it only in its separator and zone:
    /// `YYYY-MM-DDThh:mm:ss` (`T` or a space, then `Z` or nothing), a valid
    /// date, seconds below 60, year 0001 or later. Returns `nil` without
    /// calling `body` for anything else, which ``parseISO(_:)`` then decides.
    /// O(1), no allocation: most dumps write their dates this way, and this
    /// runs for every date of every record.
    static func withPlainUTC<Text: RandomAccessCollection<UInt8>, R>(
        _ text: Text, _ body: (UnsafeRawBufferPointer) -> R
    ) -> R?
    where Text.Index == Int {
        guard
            text.count == 19 || (text.count == 20 && (text.last == UInt8(ascii: "Z") || text.last == UInt8(ascii: "z")))
        else { return nil }
        return withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 19) { stored -> R? in
            let start = text.startIndex
            for offset in 0..<19 { stored[offset] = text[start + offset] }
            guard stored[4] == UInt8(ascii: "-"), stored[7] == UInt8(ascii: "-"),
                stored[10] == UInt8(ascii: "T") || stored[10] == UInt8(ascii: " "),
                stored[13] == UInt8(ascii: ":"), stored[16] == UInt8(ascii: ":")
            else { return nil }
            guard fields(UnsafeRawBufferPointer(stored)) != nil else { return nil }
            stored[10] = UInt8(ascii: " ")
            return body(UnsafeRawBufferPointer(stored))
        }
    }

    /// The date and time of `text`'s first 19 bytes, `YYYY-MM-DD?HH:MM:SS`
    /// whose separators the caller checked: nil unless each field is digits
    /// and in range. O(1), no allocation.
    @inline(__always)
    private static func fields(
        _ text: UnsafeRawBufferPointer
    ) -> (year: Int, month: Int, day: Int, hour: Int, minute: Int, second: Int)? {
        guard let year = number(text, 0, 4), let month = number(text, 5, 2), let day = number(text, 8, 2),
            let hour = number(text, 11, 2), let minute = number(text, 14, 2), let second = number(text, 17, 2),
            year >= 1, (1...12).contains(month), day >= 1, day <= daysIn(month: month, year: year),
            hour < 24, minute < 60, second < 60
        else { return nil }
        return (year, month, day, hour, minute, second)
    }

    /// The decimal number of `text`'s `digits` bytes from `from`; nil unless
    /// each is a digit.
    @inline(__always)
    private static func number(_ text: UnsafeRawBufferPointer, _ from: Int, _ digits: Int) -> Int? {
        var value = 0
        for offset in from..<(from + digits) {
            let digit = text[offset] &- 0x30
            guard digit <= 9 else { return nil }
            value = value * 10 + Int(digit)
        }
        return value
    }

    /// Microseconds since 1970-01-01 UTC of a date in the stored form
    /// (`YYYY-MM-DD HH:MM:SS`, optionally `.` and one to six digits), nil
    /// for any other text. O(1), no allocation: for a store that writes
    /// each date of a load in a binary form of its own.
    package static func storedMicroseconds(_ text: UnsafeBufferPointer<UInt8>) -> Int64? {
        guard text.count == 19 || (21...26).contains(text.count) && text[19] == UInt8(ascii: "."),
            text[4] == UInt8(ascii: "-"), text[7] == UInt8(ascii: "-"), text[10] == UInt8(ascii: " "),
            text[13] == UInt8(ascii: ":"), text[16] == UInt8(ascii: ":")
        else { return nil }
        let bytes = UnsafeRawBufferPointer(text)
        guard let (year, month, day, hour, minute, second) = fields(bytes) else { return nil }
        var micros = 0
        if text.count > 19 {
            guard let fraction = number(bytes, 20, text.count - 20) else { return nil }
            micros = fraction * pow10(26 - text.count)
        }
        let days = Int64(daysFromCivil(year: year, month: month, day: day))
        return (days * 86_400 + Int64(hour * 3_600 + minute * 60 + second)) * 1_000_000 + Int64(micros)
    }

    /// A count from epoch digits given as decimal text (`1388349428`,
    /// `1388349428.5`): whole units and millionths. The caller checks the
    /// range once it knows the unit.
    static func parseEpochSeconds(_ text: some Collection<UInt8>) -> Moment? {
        var seconds: Int64 = 0
        var micros = 0
        var negative = false
        var seenDigit = false
        var fractionDigits = -1
        for (position, byte) in text.enumerated() {
            if position == 0 && byte == UInt8(ascii: "-") {
                negative = true
            } else if byte == UInt8(ascii: ".") && fractionDigits < 0 {
                fractionDigits = 0
            } else if byte >= 0x30 && byte <= 0x39 {
                seenDigit = true
                if fractionDigits >= 0 {
                    if fractionDigits < 6 { micros = micros * 10 + Int(byte - 0x30) }
                    fractionDigits += 1
                } else {
                    let (times, overflow1) = seconds.multipliedReportingOverflow(by: 10)
                    let (sum, overflow2) = times.addingReportingOverflow(Int64(byte - 0x30))
                    guard !overflow1, !overflow2 else { return nil }
                    seconds = sum
                }
            } else {
                return nil
            }
        }
        guard seenDigit else { return nil }
        micros = fractionDigits < 0 ? 0 : micros * pow10(max(0, 6 - fractionDigits))
        if negative {
            seconds = -seconds
            if micros > 0 {
                seconds -= 1
                micros = 1_000_000 - micros
            }
        }
        return Moment(seconds: seconds, microseconds: micros)
    }

    /// Whether `moment` falls in years 0001 to 9999, which the stored form
    /// can write.
    static func isWritable(_ moment: Moment) -> Bool {
        moment.seconds >= -62_135_596_800 && moment.seconds < 253_402_300_800
    }

    /// The stored form of `moment`: `YYYY-MM-DD HH:MM:SS`, plus `.ffffff`
    /// (trailing zeros trimmed) when there is a fraction.
    static func format(_ moment: Moment) -> [UInt8] {
        let days = Int(moment.seconds.floorDiv(86_400))
        let secondOfDay = Int(moment.seconds - Int64(days) * 86_400)
        let (year, month, day) = civilFromDays(days)
        var out: [UInt8] = []
        out.reserveCapacity(26)
        // The last `width` digits of `value`, zero-padded, with no array per
        // field (this runs once per date of every record).
        func put(_ value: Int, _ width: Int) {
            var divisor = 1
            for _ in 1..<width { divisor *= 10 }
            while divisor > 0 {
                out.append(UInt8(0x30 + (value / divisor) % 10))
                divisor /= 10
            }
        }
        put(year, 4)
        out.append(UInt8(ascii: "-"))
        put(month, 2)
        out.append(UInt8(ascii: "-"))
        put(day, 2)
        out.append(UInt8(ascii: " "))
        put(secondOfDay / 3600, 2)
        out.append(UInt8(ascii: ":"))
        put(secondOfDay / 60 % 60, 2)
        out.append(UInt8(ascii: ":"))
        put(secondOfDay % 60, 2)
        if moment.microseconds > 0 {
            out.append(UInt8(ascii: "."))
            put(moment.microseconds, 6)
            while out.last == 0x30 { out.removeLast() }
        }
        return out
    }

    /// 10 to the power `exponent` (small exponents only).
    static func pow10(_ exponent: Int) -> Int {
        (0..<exponent).reduce(1) { value, _ in value * 10 }
    }

    static func isLeap(_ year: Int) -> Bool { (year % 4 == 0 && year % 100 != 0) || year % 400 == 0 }

    static func daysIn(month: Int, year: Int) -> Int {
        switch month {
        case 2: return isLeap(year) ? 29 : 28
        case 4, 6, 9, 11: return 30
        default: return 31
        }
    }

    /// Days since 1970-01-01 of a proleptic Gregorian date (H. Hinnant's method).
    static func daysFromCivil(year: Int, month: Int, day: Int) -> Int {
        let y = month <= 2 ? year - 1 : year
        let era = (y >= 0 ? y : y - 399) / 400
        let yearOfEra = y - era * 400
        let dayOfYear = (153 * (month + (month > 2 ? -3 : 9)) + 2) / 5 + day - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        return era * 146_097 + dayOfEra - 719_468
    }

    /// The proleptic Gregorian date `days` after 1970-01-01.
    static func civilFromDays(_ days: Int) -> (Int, Int, Int) {
        let z = days + 719_468
        let era = (z >= 0 ? z : z - 146_096) / 146_097
        let dayOfEra = z - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1460 + dayOfEra / 36_524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let monthIndex = (5 * dayOfYear + 2) / 153
        let day = dayOfYear - (153 * monthIndex + 2) / 5 + 1
        let month = monthIndex < 10 ? monthIndex + 3 : monthIndex - 9
        return (yearOfEra + era * 400 + (month <= 2 ? 1 : 0), month, day)
    }
}

extension Int64 {
    /// Division rounding toward negative infinity.
    func floorDiv(_ divisor: Int64) -> Int64 {
        let quotient = self / divisor
        return (self % divisor != 0 && (self < 0) != (divisor < 0)) ? quotient - 1 : quotient
    }
}
