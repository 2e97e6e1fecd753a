import SluiceBatching
import SluiceRecords

/// Where batches are applied. SQLite is the one store today; the interface
/// takes whole batch groups so that a server database can implement it with
/// set-based statements too.
package protocol RecordStore: AnyObject {
    /// Creates the tables (or adds missing columns) for `schemas`, and the
    /// link tables of to-many relationships.
    func prepare(_ schemas: [TableSchema], links: [LinkSchema]) throws(StoreError)

    /// Applies every batch of `group` and records its checkpoint, all in one
    /// transaction: on error nothing of the group stays. Returns the counts
    /// per entity index.
    func apply(_ group: BatchGroup) throws(StoreError) -> [Int: EntityCounts]
}

