import SluiceTestSupport

/// The `sluice` binary built next to the test bundle.
let sluice = TestPaths.builtProduct("sluice")
