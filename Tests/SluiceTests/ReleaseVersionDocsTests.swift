import Foundation
import SluiceTestSupport
import Testing

/// The `Package.swift` line that README.md and the getting-started article
/// show names the version of CHANGELOG.md's newest section (issue 29), the
/// release a user depends on.
@Suite struct ReleaseVersionDocsTests {
    static func read(_ path: String) throws -> String {
        try String(contentsOf: TestPaths.repository.appendingPathComponent(path), encoding: .utf8)
    }

    /// The version of the first `## X.Y.Z` heading of CHANGELOG.md.
    static func changelogVersion() throws -> String {
        let heading = try #require(
            try read("CHANGELOG.md").components(separatedBy: "\n").first { $0.hasPrefix("## ") })
        let version = heading.dropFirst(3).prefix { $0.isNumber || $0 == "." }
        #expect(version.split(separator: ".").count == 3, "\(heading)")
        return String(version)
    }

    @Test(arguments: ["README.md", "Sources/Sluice/Sluice.docc/GettingStarted.md"])
    func thePackageLineNamesTheNewestVersion(document: String) throws {
        let line = try #require(
            try Self.read(document).components(separatedBy: "\n").first { $0.hasPrefix(".package(url: ") })
        #expect(line.hasSuffix("from: \"\(try Self.changelogVersion())\"),"), "\(document): \(line)")
    }
}
