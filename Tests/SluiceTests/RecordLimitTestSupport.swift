import Foundation
import Sluice
import SluiceTestSupport

/// Imports `text` with `limits`; returns the error's description.
func limitError(
    _ yaml: String, _ name: String, _ text: String, _ limits: RecordLimits, threads: Int = ImportOptions.defaultThreads
) throws -> String {
    var options = ImportOptions()
    options.limits = limits
    options.threads = threads
    let store = TestPaths.temporaryDirectory().appendingPathComponent("l.sqlite").path
    do {
        _ = try Importer(mapping: Mapping.parse(yaml: yaml), store: store, options: options)
            .runBlocking(inputs: [TestPaths.file(name, text)])
        return "no error"
    } catch {
        return "\(error)"
    }
}
