extension StoreError.Cause {
    /// The cause PostgreSQL's SQLSTATE `state` stands for: by its code where
    /// one code is one cause, else by its class (`23` integrity constraint
    /// violations, `08` connection exceptions, `57P` a server shutting down
    /// or gone).
    init(sqlState state: String) {
        switch state {
        case "57014": self = .interrupted  // query_canceled
        case "55P03", "40P01", "40001": self = .busy  // lock_not_available, deadlock_detected, serialization_failure
        case "53100": self = .diskFull  // disk_full
        case "25006": self = .readOnly  // read_only_sql_transaction
        case "XX001", "XX002": self = .corrupt  // data_corrupted, index_corrupted
        case "58030": self = .io  // io_error
        case _ where state.hasPrefix("23"): self = .constraint
        case _ where state.hasPrefix("08") || state.hasPrefix("57P"): self = .connection
        default: self = .other
        }
    }
}
