import Foundation
import SluiceParsers
import SluiceTestSupport

/// One test of the W3C XML conformance suite, as its manifest lists it.
struct ConformanceCase {
    var id: String
    var type: String
    var entities: String
    var path: String
    var version: String
    var recommendation: String
    var namespace: String
    var edition: String
}

/// Reads the suite's manifests (with sluice's own XML parser).
final class ManifestReader: XMLEventHandler {
    var cases: [ConformanceCase] = []
    private var bases: [String]
    private let directory: String

    init(directory: String) {
        self.directory = directory
        bases = [""]
    }

    func startElement(name: ByteSpan, attributes: UnsafeBufferPointer<XMLAttribute>) throws {
        var values: [String: String] = [:]
        for attribute in attributes { values[attribute.name.string] = attribute.value.string }
        let base = (bases.last ?? "") + (values["base"] ?? "")
        bases.append(base)
        guard name.string == "TEST", let uri = values["URI"] else { return }
        cases.append(
            ConformanceCase(
                id: values["ID"] ?? uri, type: values["TYPE"] ?? "", entities: values["ENTITIES"] ?? "none",
                path: directory + "/" + base + uri, version: values["VERSION"] ?? "1.0",
                recommendation: values["RECOMMENDATION"] ?? "XML1.0", namespace: values["NAMESPACE"] ?? "yes",
                edition: values["EDITION"] ?? ""))
    }

    func endElement() throws { bases.removeLast() }
    func characters(_ text: ByteSpan) throws {}

    /// Every case of the suite rooted at `xmlconf/xmlconf.xml`.
    static func allCases(root: String) throws -> [ConformanceCase] {
        let master = try String(contentsOfFile: root + "/xmlconf.xml", encoding: .utf8)
        let manifests = master.matches(of: /SYSTEM\s+"([^"]+\.xml)"/).map { String($0.output.1) }
        var cases: [ConformanceCase] = []
        for manifest in manifests {
            let path = root + "/" + manifest
            let reader = ManifestReader(directory: (path as NSString).deletingLastPathComponent)
            let parser = XMLPushParser(handler: reader, name: path)
            // Some manifests are external entities with several top-level
            // TEST elements: drop the text declaration and wrap them.
            var text = try String(contentsOfFile: path, encoding: .utf8)
            if let declaration = text.firstMatch(of: /^\s*<\?xml[^?]*\?>/) { text.removeSubrange(declaration.range) }
            try Array(("<manifest>" + text + "</manifest>").utf8).withUnsafeBytes { try parser.feed($0) }
            try parser.finish()
            cases += reader.cases
        }
        return cases
    }
}

/// Parses a file with a handler that ignores everything; the error, if any.
func xmlVerdict(_ path: String) -> ParseError? {
    guard let data = FileManager.default.contents(atPath: path) else {
        return ParseError(.malformed("unreadable"), at: SourceLocation(file: path))
    }
    let parser = XMLPushParser(handler: IgnoringHandler(), name: path)
    do {
        try [UInt8](data).withUnsafeBytes { try parser.feed($0) }
        try parser.finish()
        return nil
    } catch let error as ParseError {
        return error
    } catch {
        return ParseError(.malformed("\(error)"), at: SourceLocation(file: path))
    }
}

final class IgnoringHandler: XMLEventHandler {
    func startElement(name: ByteSpan, attributes: UnsafeBufferPointer<XMLAttribute>) throws {}
    func endElement() throws {}
    func characters(_ text: ByteSpan) throws {}
}
