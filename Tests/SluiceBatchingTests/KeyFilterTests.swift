import Testing

@testable import SluiceBatching

/// The filter the scan of kept units asks first: never "no" for a key
/// inserted (by its table and bytes, or by its hash), and "maybe" for few
/// of the keys never inserted.
@Suite struct KeyFilterTests {
    /// The bytes of key `number`, as varied in length as keys are.
    func key(_ number: Int) -> [UInt8] {
        (0..<(1 + number % 9)).map { UInt8(truncatingIfNeeded: number >> ($0 * 3)) } + [UInt8(number % 251)]
    }

    @Test func answersMaybeForEveryKeyInsertedAndNoForMostOthers() {
        var filter = KeyFilter(count: 10_000)
        for number in 0..<5_000 { key(number).withUnsafeBytes { filter.insert(table: number % 3, key: $0) } }
        for number in 5_000..<10_000 {
            key(number).withUnsafeBytes { filter.insert(hash: KeyFilter.hash(table: number % 3, key: $0)) }
        }
        for number in 0..<10_000 {
            #expect(key(number).withUnsafeBytes { filter.mayContain(table: number % 3, key: $0) })
        }
        // The same bytes in another table, and keys never inserted.
        let others = (0..<10_000).filter { number in
            key(number).withUnsafeBytes { filter.mayContain(table: number % 3 + 3, key: $0) }
        }
        let unseen = (10_000..<20_000).filter { number in
            key(number).withUnsafeBytes { filter.mayContain(table: number % 3, key: $0) }
        }
        #expect(others.count < 1_000 && unseen.count < 1_000, "\(others.count), \(unseen.count) of 10,000")
    }
}
