import Foundation
import SluiceTestSupport
import Testing

/// The app's package of AppPackageTests (Tests/Fixtures/App) has a test
/// target, `AppTests`, that holds what an app expects of the library
/// (issue 29, points 1–4): a cancellation that returns once the run has
/// stopped and released the store, and throws `ImportError.cancelled`; what
/// a cancel or a failure keeps in each apply order, as the documentation
/// says; typed errors that read like the CLI's; enums and named structs
/// where tuples and strings were, a `Sendable` `PushImport`. They build
/// against the library as an app's code does, in the fixture's own
/// `.build/app-fixture` (shared with AppPackageTests, which waits for this
/// build's lock), and run with `swift test`.
@Suite struct AppBehaviourTests {
    @Test func anAppsExpectationsHold() throws {
        let package = ["--package-path", AppPackageTests.fixture.path, "--scratch-path", AppPackageTests.scratch.path]
        // The test product alone: the fixture's `Machinery` target must not build.
        let build = try runCommand(
            "/usr/bin/env", ["swift", "build"] + package + ["--product", "sluice-app-fixturePackageTests"])
        #expect(build.status == 0, "\(build.stdout)\(build.stderr)")
        let run = try runCommand("/usr/bin/env", ["swift", "test", "--skip-build"] + package)
        #expect(run.status == 0, "\(run.stdout)\(run.stderr)")
        for suite in ["CancellationTests", "CommitTests", "ErrorTests", "TypeTests"] {
            #expect(run.stdout.contains("Suite \(suite) passed"), "\(suite): \(run.stdout)")
        }
    }
}
