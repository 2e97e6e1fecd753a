/// What the values seen at one source path look like, to guess a type.
struct FieldStatistics {
    var present = 0
    var nulls = 0
    var integers = 0
    var numbers = 0
    var booleans = 0
    var dates = 0
    var objects = 0
    var arrays = 0
    /// Distinct values, to propose keys; nil once too many to keep.
    var distinct: Set<String>? = []
    static let distinctCap = 200_000

    /// Records one scalar value given as source text; `isNumber` for JSON numbers.
    mutating func add(text: ArraySlice<UInt8>, isNumber: Bool, isBoolean: Bool) {
        present += 1
        let trimmed = ValueConversion.trimmed(text)
        if isBoolean || ValueConversion.boolean(trimmed) != nil && !trimmed.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }) {
            booleans += 1
        }
        if ValueConversion.integer(trimmed) != nil && !(trimmed.count > 1 && trimmed.first == 0x30) {
            integers += 1
        }
        if isNumber || ValueConversion.double(trimmed) != nil { numbers += 1 }
        if !isNumber, trimmed.count >= 10, DateText.parseISO(trimmed) != nil { dates += 1 }
        if distinct != nil {
            distinct?.insert(String(decoding: trimmed, as: UTF8.self))
            if distinct!.count > Self.distinctCap { distinct = nil }
        }
    }

    /// The statistics of both samples together.
    func merged(with other: FieldStatistics) -> FieldStatistics {
        var sum = self
        sum.present += other.present
        sum.nulls += other.nulls
        sum.integers += other.integers
        sum.numbers += other.numbers
        sum.booleans += other.booleans
        sum.dates += other.dates
        sum.objects += other.objects
        sum.arrays += other.arrays
        if let mine = distinct, let theirs = other.distinct, mine.count + theirs.count <= Self.distinctCap {
            let union = mine.union(theirs)
            // Values seen in both samples repeat: the merged field is not unique.
            sum.distinct = union.count == mine.count + theirs.count ? union : []
        } else {
            sum.distinct = nil
        }
        return sum
    }

    /// The type every non-null value fits, most specific first.
    var guessedType: AttributeType {
        let values = present - nulls
        if objects > 0 || arrays > 0 { return .json }
        guard values > 0 else { return .string }
        if booleans == values { return .boolean }
        if integers == values { return .integer }
        if numbers == values { return .double }
        if dates == values { return .date }
        return .string
    }

    /// Whether this field could be the key of `records` records: present in
    /// each, never null, all distinct.
    func isUnique(records: Int) -> Bool {
        guard let distinct, present == records, nulls == 0 else { return false }
        return distinct.count == records
    }
}
