import Foundation
import SluiceParsers
import SluiceTestSupport
import Testing

/// Parses a whole file as one JSON document; returns the error, if any.
/// With `pieces`, every string a chunk ends inside is read on by the parser
/// and handed over in pieces (``JSONStringPieceHandler``).
func jsonVerdict(_ path: String, chunk: Int = 65_536, pieces: Bool = false) -> ParseError? {
    guard let data = FileManager.default.contents(atPath: path) else {
        return ParseError(.malformed("unreadable"), at: SourceLocation(file: path))
    }
    let parser =
        pieces
        ? JSONPushParser(handler: PieceLog(), name: path, multipleValues: false, longStringBytes: 1)
        : JSONPushParser(handler: EventLog(), name: path, multipleValues: false)
    let bytes = [UInt8](data)
    do {
        try feedInChunks(bytes, chunk) { try parser.feed($0) }
        try parser.finish()
        return nil
    } catch let error as ParseError {
        return error
    } catch {
        return ParseError(.malformed("\(error)"), at: SourceLocation(file: path))
    }
}

/// The deliberate verdict on each implementation-defined (`i_`) case; the
/// reasons are in docs/conformance.md.
let implementationDefined: [String: Bool] = [
    "i_number_double_huge_neg_exp.json": true,
    "i_number_huge_exp.json": true,
    "i_number_neg_int_huge_exp.json": true,
    "i_number_pos_double_huge_exp.json": true,
    "i_number_real_neg_overflow.json": true,
    "i_number_real_pos_overflow.json": true,
    "i_number_real_underflow.json": true,
    "i_number_too_big_neg_int.json": true,
    "i_number_too_big_pos_int.json": true,
    "i_number_very_big_negative_int.json": true,
    "i_object_key_lone_2nd_surrogate.json": false,
    "i_string_1st_surrogate_but_2nd_missing.json": false,
    "i_string_1st_valid_surrogate_2nd_invalid.json": false,
    "i_string_UTF-16LE_with_BOM.json": false,
    "i_string_UTF-8_invalid_sequence.json": false,
    "i_string_UTF8_surrogate_U+D800.json": false,
    "i_string_incomplete_surrogate_and_escape_valid.json": false,
    "i_string_incomplete_surrogate_pair.json": false,
    "i_string_incomplete_surrogates_escape_valid.json": false,
    "i_string_invalid_lonely_surrogate.json": false,
    "i_string_invalid_surrogate.json": false,
    "i_string_invalid_utf-8.json": false,
    "i_string_inverted_surrogates_U+1D11E.json": false,
    "i_string_iso_latin_1.json": false,
    "i_string_lone_second_surrogate.json": false,
    "i_string_lone_utf8_continuation_byte.json": false,
    "i_string_not_in_unicode_range.json": false,
    "i_string_overlong_sequence_2_bytes.json": false,
    "i_string_overlong_sequence_6_bytes.json": false,
    "i_string_overlong_sequence_6_bytes_null.json": false,
    "i_string_truncated-utf-8.json": false,
    "i_string_utf16BE_no_BOM.json": false,
    "i_string_utf16LE_no_BOM.json": false,
    "i_structure_500_nested_arrays.json": true,
    "i_structure_UTF-8_BOM_empty_object.json": true,
]

@Suite struct JSONTestSuiteTests {
    let folder = TestPaths.corpus("jsontestsuite/test_parsing")

    func files(_ prefix: String) throws -> [String] {
        try FileManager.default.contentsOfDirectory(atPath: folder).filter { $0.hasPrefix(prefix) }.sorted()
    }

    @Test func acceptsEveryYesCase() throws {
        let cases = try files("y_")
        #expect(cases.count == 95)
        for name in cases {
            let verdict = jsonVerdict("\(folder)/\(name)")
            #expect(verdict == nil, "\(name): \(verdict.map { "\($0)" } ?? "")")
        }
    }

    @Test func rejectsEveryNoCase() throws {
        let cases = try files("n_")
        #expect(cases.count == 188)
        for name in cases {
            #expect(jsonVerdict("\(folder)/\(name)") != nil, "\(name) was accepted")
        }
    }

    @Test func implementationDefinedCasesGetTheDocumentedVerdict() throws {
        let cases = try files("i_")
        #expect(Set(cases) == Set(implementationDefined.keys))
        for name in cases {
            let accepted = jsonVerdict("\(folder)/\(name)") == nil
            #expect(accepted == implementationDefined[name], "\(name)")
        }
    }

    @Test func oneByteChunksGiveTheSameVerdicts() throws {
        for name in try files("") where name.hasSuffix(".json") {
            let whole = jsonVerdict("\(folder)/\(name)") == nil
            let bytewise = jsonVerdict("\(folder)/\(name)", chunk: 1) == nil
            #expect(whole == bytewise, "\(name)")
        }
    }

    /// Strings the parser reads on itself get yajl's verdicts, messages and
    /// places, whatever the chunks.
    @Test func stringsInPiecesGiveTheSameVerdictsAndErrors() throws {
        for name in try files("") where name.hasSuffix(".json") {
            for chunk in [1, 3] {
                let plain = jsonVerdict("\(folder)/\(name)", chunk: chunk)
                let pieced = jsonVerdict("\(folder)/\(name)", chunk: chunk, pieces: true)
                #expect(plain?.description == pieced?.description, "\(name), chunks of \(chunk)")
            }
        }
    }
}
