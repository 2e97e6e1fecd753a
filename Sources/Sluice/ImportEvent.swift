/// What ``Importer/events(inputs:)-([String])`` yields: progress while the import
/// runs, then its report.
public enum ImportEvent: Sendable {
    /// Where the run is (phase, amounts, counts per entity, time left).
    case progress(ImportProgress)
    /// The run completed; the last event.
    case finished(ImportReport)
}
