import Foundation

/// Copies of a test database, and waiting for a killed importer to leave
/// one, for tests that kill runs into copies of one prepared database.
extension PostgresTestServer {
    /// The database a connection string names.
    public static func databaseName(_ conninfo: String) -> String {
        String(conninfo.split(separator: " ").first { $0.hasPrefix("dbname=") }?.dropFirst(7) ?? "")
    }

    /// Waits (at most 30 seconds, polling every 10 ms) until no session but
    /// the caller's is left on `database`: a killed importer's ends once its
    /// server process notices the client is gone.
    public func waitForIdle(_ database: String) {
        let deadline = Date().addingTimeInterval(30)
        let others =
            "SELECT count(*) FROM pg_stat_activity WHERE datname = '\(Self.databaseName(database))' "
            + "AND pid <> pg_backend_pid()"
        while PostgresReader(conninfo()).value(others) != "0" && Date() < deadline { usleep(10_000) }
    }

    /// A new database named after `database` and `suffix` holding what
    /// `database` holds (`CREATE DATABASE … TEMPLATE`, once the importers
    /// that wrote it are gone): a file copy on the server, well under a
    /// second for the tests' databases.
    public func copy(of database: String, _ suffix: String) throws -> String {
        waitForIdle(database)
        let name = "\(Self.databaseName(database))_\(suffix)"
        try execute("CREATE DATABASE \(name) TEMPLATE \(Self.databaseName(database))")
        return conninfo(name)
    }
}
