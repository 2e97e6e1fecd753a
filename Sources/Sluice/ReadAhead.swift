import SluiceBatching
import SluiceInput

/// Reads an input on a thread of its own, a few chunks ahead of the parser:
/// the `read(2)` copies, any decompression and any wait for the disk or the
/// pipe happen there instead of on the parse thread. On the 1 GB events
/// benchmark the kernel's copy alone was a tenth of the parse thread's time.
///
/// Memory: `depth` buffers of the chunk size. The buffers go back and forth
/// between the two threads through two queues; none is copied.
final class ReadAhead {
    /// A filled buffer, the end of the input, or the error that ended it.
    private enum Message {
        case chunk(buffer: Int, count: Int, consumed: Int64)
        case end
        case failed(InputError)
    }

    /// The buffers, shared by both threads and freed when the last of them
    /// lets go (the reader may still be inside `read(2)` after ``stop()``).
    private final class Buffers: @unchecked Sendable {
        let storage: [UnsafeMutableRawBufferPointer]

        init(count: Int, size: Int) {
            storage = (0..<count).map { _ in UnsafeMutableRawBufferPointer.allocate(byteCount: size, alignment: 16) }
        }

        deinit {
            for buffer in storage { buffer.deallocate() }
        }
    }

    private let buffers: Buffers
    private let filled: BlockingQueue<Message>
    private let free: BlockingQueue<Int>
    private var worker: Worker?
    /// The source, read on the caller's thread by ``next()`` when the
    /// system gave no thread for the reader.
    private var direct: ByteSource?
    /// The buffer handed out by the last ``next()``, returned by the next.
    private var lent: Int?

    /// Starts reading `source` in chunks of `chunkSize` bytes, at most
    /// `depth` chunks ahead. `source` must not be used elsewhere until the
    /// input ends or ``stop()`` is called. Once `cancellation` is set,
    /// ``next()`` gives the end of the input instead of waiting for a
    /// reader blocked in `read(2)` (a pipe whose writer is silent).
    init(_ source: ByteSource, chunkSize: Int, depth: Int = 4, cancellation: Flag? = nil) {
        let buffers = Buffers(count: max(2, depth), size: max(1, chunkSize))
        let filled = BlockingQueue<Message>(capacity: buffers.storage.count)
        let free = BlockingQueue<Int>(capacity: buffers.storage.count)
        for index in buffers.storage.indices { _ = free.push(index) }
        self.buffers = buffers
        self.filled = filled
        self.free = free
        cancellation?.whenSet { filled.close() }
        let read = {
            defer { filled.close() }
            while let index = free.pop() {
                let message: Message
                do throws(InputError) {
                    let count = try source.read(into: buffers.storage[index])
                    message = count == 0 ? .end : .chunk(buffer: index, count: count, consumed: source.consumedBytes)
                } catch {
                    message = .failed(error)
                }
                guard filled.push(message), case .chunk = message else { return }
            }
        }
        do { worker = try Worker(read) } catch { direct = source }
    }

    deinit { stop() }

    /// The next chunk and how many bytes of the underlying file were taken
    /// so far; empty at the end of the input. The bytes stay valid until the
    /// next call. Waits for the reader when it is behind.
    ///
    /// - Throws: the ``InputError`` that ended the input, after every chunk
    ///   read before it.
    func next() throws(InputError) -> (bytes: UnsafeRawBufferPointer, consumed: Int64) {
        if let direct {
            let count = try direct.read(into: buffers.storage[0])
            return (UnsafeRawBufferPointer(rebasing: buffers.storage[0][..<count]), direct.consumedBytes)
        }
        if let lent {
            _ = free.push(lent)
            self.lent = nil
        }
        switch filled.pop() {
        case .chunk(let buffer, let count, let consumed):
            lent = buffer
            return (UnsafeRawBufferPointer(rebasing: buffers.storage[buffer][..<count]), consumed)
        case .failed(let error):
            throw error
        case .end, nil:
            return (UnsafeRawBufferPointer(start: nil, count: 0), 0)
        }
    }

    /// Stops reading. The reader thread is not waited for: it may be blocked
    /// in `read(2)` on a pipe, and ends at its next chunk.
    func stop() {
        filled.fail()
        free.close()
        worker?.detach()
        worker = nil
        direct = nil
    }
}
