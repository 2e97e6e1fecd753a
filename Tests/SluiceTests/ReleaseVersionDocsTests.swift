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

    /// The version of the first `## X.Y.Z` heading of CHANGELOG.md: the
    /// newest release (an `## Unreleased` section above it lists what `main`
    /// has since).
    static func changelogVersion() throws -> String {
        let heading = try #require(
            try read("CHANGELOG.md").components(separatedBy: "\n").first {
                $0.hasPrefix("## ") && $0.dropFirst(3).first?.isNumber == true
            })
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

    /// Every release tag of the clone has its dated section in CHANGELOG.md
    /// (`## X.Y.Z (YYYY-MM-DD)`), and the newest tag is the newest section.
    @Test func everyReleaseTagHasItsChangelogSection() throws {
        let tags = try runCommand(
            "/usr/bin/env", ["git", "-C", TestPaths.repository.path, "tag", "--list", "--sort=-version:refname"])
        try #require(tags.status == 0, "git tag: \(tags.stderr)")
        let versions = tags.stdout.split(separator: "\n").map(String.init)
        let headings = try Self.read("CHANGELOG.md").components(separatedBy: "\n").filter { $0.hasPrefix("## ") }
        for version in versions {
            let dated = #"^## \#(NSRegularExpression.escapedPattern(for: version)) \(\d{4}-\d{2}-\d{2}\)$"#
            #expect(
                headings.contains { $0.range(of: dated, options: .regularExpression) != nil },
                "CHANGELOG.md has no dated section for the tag \(version)")
        }
        if let newest = versions.first { #expect(try Self.changelogVersion() == newest) }
    }
}
