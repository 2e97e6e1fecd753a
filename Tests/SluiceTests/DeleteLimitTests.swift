import Sluice
import Testing

/// `--max-delete`'s values: what is read, what is refused, and where the
/// limit falls.
struct DeleteLimitTests {
    @Test func readsRowsAndPercentages() {
        #expect(DeleteLimit("0") == .rows(0))
        #expect(DeleteLimit("20000") == .rows(20_000))
        #expect(DeleteLimit("5%") == .percent(5))
        #expect(DeleteLimit("0.5%") == .percent(0.5))
        #expect(DeleteLimit("100%") == .percent(100))
        #expect(DeleteLimit("5%")?.description == "5%")
        #expect(DeleteLimit("0.5%")?.description == "0.5%")
    }

    @Test(arguments: ["", "-1", "-5%", "100.1%", "ten", "5 %", "%", "5%%", "nan%", "inf%", "1e3"])
    func refusesAnythingElse(text: String) {
        #expect(DeleteLimit(text) == nil)
    }

    @Test func theLimitItselfIsAllowed() {
        #expect(DeleteLimit.rows(10).allows(deleting: 10, of: 20))
        #expect(!DeleteLimit.rows(10).allows(deleting: 11, of: 1_000))
        #expect(DeleteLimit.percent(10).allows(deleting: 100, of: 1_000))
        #expect(!DeleteLimit.percent(10).allows(deleting: 101, of: 1_000))
        #expect(DeleteLimit.percent(0).allows(deleting: 0, of: 0))
        #expect(!DeleteLimit.percent(0).allows(deleting: 1, of: 1_000_000))
    }
}
