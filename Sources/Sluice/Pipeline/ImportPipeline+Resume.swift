/// Resuming: which run a resume continues and where each input's committed
/// records end (the parse side checks that a resumed standard input repeats
/// the stream the interrupted run read: ``ParseSide/followStream(_:)``).
extension ImportPipeline {
    /// The run a resume continues: the last run of the same inputs, which
    /// must have been started with the same `options`. A resume that would be
    /// a different run is refused, naming what differs; runs an earlier
    /// sluice recorded without options are not compared. Nil when the store has no
    /// such run (it died before recording itself, so it committed nothing:
    /// the resume reads from the start). A completed run resumes to itself:
    /// every input's checkpoint is at its end and its sweeps are done.
    static func interruptedRun(_ store: any ImportStore, inputs: [String], _ options: RunOptions) throws(ImportError)
        -> RunRecord?
    {
        let last: RunRecord?
        do { last = try store.lastRun(inputs: inputs) } catch { throw .store(error) }
        guard let run = last else { return nil }
        let differences = run.options.map(options.differences(from:)) ?? []
        guard differences.isEmpty else {
            throw .usage(
                "cannot resume run \(run.id): it was started with other options (\(differences.joined(separator: "; "))); "
                    + "resume with the options it had, or run the import without --resume")
        }
        return run
    }

    /// What the run says when it resumed one that had completed.
    var resumedCompletedRunWarning: [String] {
        guard let run = resumedRun, run.status == .completed else { return [] }
        return ["run \(run.id), which this run resumes, had completed: nothing was left to read or delete"]
    }

    /// The committed records of each input of an interrupted run, checked
    /// against the inputs' identities now.
    static func resumePoints(
        _ store: any ImportStore, _ inputs: [(name: String, identity: InputIdentity?)]
    ) throws(ImportError) -> (points: [String: Int], streams: [String: InputIdentity]) {
        var points: [String: Int] = [:]
        var streams: [String: InputIdentity] = [:]
        for (name, identity) in inputs {
            let saved: Checkpoint?
            do { saved = try store.checkpoint(for: name) } catch { throw .store(error) }
            guard let saved else { continue }
            guard let identity else {
                guard let prefix = saved.identity, prefix.isStreamPrefix else {
                    throw .usage(
                        "cannot resume: the interrupted run did not read \(name) as a stream; run the import without --resume"
                    )
                }
                streams[name] = prefix
                points[name] = saved.records
                continue
            }
            guard saved.identity == identity else {
                throw .usage(
                    "cannot resume: \(name) changed since the interrupted run (then \(saved.identity.map { "\($0)" } ?? "unknown"), now \(identity)); run the import without --resume"
                )
            }
            points[name] = saved.records
        }
        return (points, streams)
    }
}
