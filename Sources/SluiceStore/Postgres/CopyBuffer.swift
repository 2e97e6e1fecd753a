@_spi(Machinery) import SluiceRecords

/// Rows in PostgreSQL's binary `COPY` format, sent to the server in pieces
/// of ``flushBytes`` as they fill: a signature, then per row a field count
/// and each field as a length (-1 for NULL) and its bytes, all big-endian,
/// then a trailer.
struct CopyBuffer {
    /// Bytes gathered before they go to the server. 1 MiB pieces kept the
    /// COPY of 200,000 events' rows within 2% of one piece per batch, and
    /// bound the memory a batch of wide rows holds here.
    static let flushBytes = 1 << 20

    private(set) var bytes: [UInt8] = []
    /// Whether every piece reached libpq.
    private(set) var sent = true
    private let send: ([UInt8]) -> Bool

    init(send: @escaping ([UInt8]) -> Bool) {
        self.send = send
        bytes.reserveCapacity(Self.flushBytes + 4_096)
        bytes.append(contentsOf: CopyRow.signature)
        append(UInt32(0))
        append(UInt32(0))
    }

    /// Starts a row of `fields` fields.
    mutating func beginRow(fields: Int) {
        if bytes.count >= Self.flushBytes { flush() }
        append(UInt16(fields))
    }

    mutating func null() { append(UInt32(bitPattern: -1)) }

    mutating func int64(_ value: Int64) {
        append(UInt32(8))
        append(UInt64(bitPattern: value))
    }

    mutating func double(_ value: Double) {
        append(UInt32(8))
        append(value.bitPattern)
    }

    mutating func bool(_ value: Bool) {
        append(UInt32(1))
        bytes.append(value ? 1 : 0)
    }

    /// A field of `raw` bytes, after `prefix` (jsonb's version byte).
    mutating func field(_ raw: UnsafeBufferPointer<UInt8>, prefix: UInt8? = nil) {
        append(UInt32(raw.count + (prefix == nil ? 0 : 1)))
        if let prefix { bytes.append(prefix) }
        bytes.append(contentsOf: raw)
    }

    /// A field of `length` bytes from the side file of large values, read
    /// in pieces and sent as the buffer fills, so that the buffer never holds
    /// the value whole; the system's reason when a read fails. O(length).
    mutating func field(length: Int, at offset: Int64, in spill: ValueSpill) -> String? {
        append(UInt32(length))
        return spill.forEachChunk(from: offset, length: length) { piece in
            bytes.append(contentsOf: piece)
            if bytes.count >= Self.flushBytes { flush() }
            return true
        }
    }

    /// A text field.
    mutating func text(_ value: String, prefix: UInt8? = nil) {
        var value = value
        value.withUTF8 { field($0, prefix: prefix) }
    }

    /// Writes the trailer and sends what is left.
    mutating func finish() {
        append(UInt16(0xFFFF))
        flush()
    }

    private mutating func flush() {
        if !bytes.isEmpty && sent { sent = send(bytes) }
        bytes.removeAll(keepingCapacity: true)
    }

    private mutating func append<T: FixedWidthInteger>(_ value: T) {
        withUnsafeBytes(of: value.bigEndian) { bytes.append(contentsOf: $0) }
    }
}
