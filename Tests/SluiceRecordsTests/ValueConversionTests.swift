import SluiceParsers
@_spi(Machinery) import SluiceRecords
import Testing

@Suite struct ValueConversionTests {
    func convert(_ json: String, _ type: String) throws -> String {
        let rows = try assemble(
            "entities: {A: {records: $, key: k, attributes: {k: integer, v: \(type)}}}",
            json: #"{"k": 1, "v": \#(json)}"#)
        return rows.row(0, 0)[1]
    }

    @Test func integersAreExact() throws {
        #expect(try convert("10158365420975381", "integer") == "10158365420975381")
        #expect(try convert("-9223372036854775808", "integer") == "-9223372036854775808")
        #expect(try convert(#""42""#, "integer") == "42")
        #expect(try convert("12.0", "integer") == "12")
        #expect(throws: ParseError.self) { try convert("9223372036854775808", "integer") }
        #expect(throws: ParseError.self) { try convert("1.5", "integer") }
    }

    @Test func numbersIntoStringsKeepTheirDigits() throws {
        #expect(try convert("10248909829", "string") == "'10248909829'")
        #expect(try convert("true", "string") == "'true'")
    }

    @Test func booleansAndDoubles() throws {
        #expect(try convert(#""True""#, "boolean") == "1")
        #expect(try convert(#""no""#, "boolean") == "0")
        #expect(try convert("false", "boolean") == "0")
        #expect(try convert("124.3", "double") == "124.3")
        #expect(try convert("1e10", "double") == "10000000000.0")
        #expect(throws: ParseError.self) { try convert(#""nan""#, "double") }
    }

    @Test func datesBecomeSortableUTC() throws {
        #expect(try convert(#""2011-07-23T22:30:40Z""#, "date") == "'2011-07-23 22:30:40'")
        #expect(try convert(#""2011-08-17T19:49:15.197""#, "date") == "'2011-08-17 19:49:15.197'")
        #expect(try convert(#""2015-01-01T00:30:00+02:00""#, "date") == "'2014-12-31 22:30:00'")
        #expect(try convert(#""2015-01-01 00:30:00-0130""#, "date") == "'2015-01-01 02:00:00'")
        #expect(try convert(#""2021-08-01""#, "date") == "'2021-08-01 00:00:00'")
        #expect(try convert(#""2020-02-29T01:02:03.1234567Z""#, "date") == "'2020-02-29 01:02:03.123456'")
        #expect(try convert("1388349428", "date") == "'2013-12-29 20:37:08'")
        #expect(throws: ParseError.self) { try convert(#""2021-02-30""#, "date") }
        #expect(throws: ParseError.self) { try convert(#""yesterday""#, "date") }
    }

    @Test func nullIsNullAndAbsentIsAbsent() throws {
        #expect(try convert("null", "integer") == "null")
        let rows = try assemble(
            "entities: {A: {records: $, key: k, attributes: {k: integer, v: string}}}", json: #"{"k": 1}"#)
        #expect(rows.row(0, 0) == ["1", "-"])
    }
}
