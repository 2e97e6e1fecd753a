/// A borrowed run of bytes handed to an event handler; valid only during the
/// callback that receives it.
package typealias ByteSpan = UnsafeBufferPointer<UInt8>

extension UnsafeBufferPointer where Element == UInt8 {
    /// The bytes as a Swift `String` (invalid UTF-8 repaired); allocates, so
    /// for messages and schema work, not the hot path.
    package var string: String { String(decoding: self, as: UTF8.self) }
}
