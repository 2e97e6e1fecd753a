import Sluice
import SluiceTestSupport
import Testing

@Suite struct EpochUnitTests {
    @Test func microsecondsNanosecondsAndAutoByDigits() throws {
        let store = newStore()
        try importText(
            """
            entities:
              E:
                records: $
                key: []
                attributes:
                  micros: {type: date, epoch: microseconds}
                  nanos: {type: date, epoch: nanoseconds}
                  a10: {type: date, epoch: auto}
                  a13: {type: date, epoch: auto}
                  a16: {type: date, epoch: auto}
                  a19: {type: date, epoch: auto}
                  before1970: {type: date, epoch: microseconds}
            """, "e.json",
            """
            {"micros": 1441888808000123, "nanos": "1441888808000123999", "a10": 1441888808, "a13": 1441888808123,
             "a16": 1441888808000000, "a19": 1441888808000000000, "before1970": -1500000}
            """, store: store)
        #expect(
            StoreReader(store).rows("SELECT * FROM E") == [
                [
                    "2015-09-10 12:40:08.000123", "2015-09-10 12:40:08.000123", "2015-09-10 12:40:08",
                    "2015-09-10 12:40:08.123",
                    "2015-09-10 12:40:08", "2015-09-10 12:40:08", "1969-12-31 23:59:58.5",
                ]
            ])
    }

    @Test func anEpochOutOfRangeSaysEpochNotISO() throws {
        let store = newStore()
        #expect {
            try importText(
                "entities: {E: {records: $, key: [], attributes: {t: {type: date, epoch: seconds}}}}", "e.json",
                #"{"t": 99999999999999999}"#, store: store)
        } throws: { error in
            "\(error)".contains("expected a date as epoch seconds from year 0 to 9999")
                && !"\(error)".contains("ISO-8601")
        }
    }
}
