/// The events of one import, from ``Importer/events(inputs:)-([String])``:
/// its progress, then its report. The run starts when the iteration does
/// and throws its ``ImportError``.
///
/// Ending the iteration early cancels the run, and the loop is left only
/// once the run has stopped, recorded itself as `cancelled` and released the
/// store: leaving it by `break` (or `return`, or a throw) waits there, on
/// the loop's thread, for the batch in flight to roll back; cancelling the
/// task makes the next step throw ``ImportError/cancelled`` once the run has
/// stopped (unless the run completed first: then its report comes as it
/// would). A run that ends the iteration by its own error throws it.
public struct ImportEvents: AsyncSequence, Sendable {
    public typealias Element = ImportEvent
    public typealias Failure = ImportError

    let importer: Importer
    let inputs: [String]

    /// Starts the run.
    public func makeAsyncIterator() -> Iterator { Iterator(run: EventRun(importer: importer, inputs: inputs)) }

    /// The events of a run that started when this was made.
    public struct Iterator: AsyncIteratorProtocol {
        let run: EventRun
        var progress: AsyncStream<ImportProgress>.Iterator
        var ended = false

        init(run: EventRun) {
            self.run = run
            progress = run.progress.makeAsyncIterator()
        }

        /// The next progress report, else the report once the run has
        /// completed, else nil.
        ///
        /// - Throws: the run's ``ImportError``; ``ImportError/cancelled``
        ///   when the task was cancelled, once the run has stopped.
        public mutating func next() async throws(ImportError) -> ImportEvent? {
            guard !ended else { return nil }
            if let report = await progress.next(isolation: nil) { return .progress(report) }
            ended = true
            return .finished(try await run.report())
        }
    }
}

/// One run of ``ImportEvents``, on a thread of its own: progress in a
/// stream that keeps the newest ``Importer/eventBuffer`` reports, the result
/// kept for the iterator. Let go before the run ends (the loop was left), it
/// cancels the run and waits for its end.
final class EventRun: Sendable {
    let progress: AsyncStream<ImportProgress>
    private let cancellation = Flag()
    private let end = RunEnd()
    private let outcome = Shared<Result<ImportReport, ImportError>>(.failure(.cancelled))

    init(importer: Importer, inputs: [String]) {
        let (stream, continuation) = AsyncStream.makeStream(
            of: ImportProgress.self, bufferingPolicy: .bufferingNewest(Importer.eventBuffer))
        progress = stream
        let (cancellation, end, outcome) = (self.cancellation, self.end, self.outcome)
        continuation.onTermination = { _ in cancellation.set() }
        end.begin()
        let body = {
            do throws(ImportError) {
                outcome.set(
                    .success(
                        try importer.runBlocking(
                            inputs: inputs, progress: { continuation.yield($0) }, cancellation: cancellation)))
            } catch {
                outcome.set(.failure(error))
            }
            end.end()
            continuation.finish()
        }
        // Without a thread of its own the run ends before the events are
        // read: they wait in the stream's buffer, its newest kept.
        do { try Worker(body).detach() } catch { body() }
    }

    deinit {
        cancellation.set()
        end.wait()
    }

    /// The run's report, once it has ended.
    func report() async throws(ImportError) -> ImportReport {
        await end.ended()
        return try outcome.value.get()
    }
}
