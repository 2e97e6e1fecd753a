import Foundation
import Sluice

/// The command line that continues an import, as `sluice import` records it
/// in the ledger for `sluice status` to show should the run die: its own
/// arguments with `--resume` added, after a `cd` to its working directory
/// (inputs and the store may be relative paths), the store's password
/// masked.
enum ResumeCommand {
    /// `cd DIR && ARGUMENTS --resume`, quoted for a POSIX shell, where
    /// `arguments` are the process's (the program first) and `store` the
    /// `--into` value.
    static func line(arguments: [String], directory: String, store: String) -> String {
        let masked = Status.masked(store: store)
        var words = arguments.map { argument in
            argument == store ? masked : argument == "--into=" + store ? "--into=" + masked : argument
        }
        if !words.contains("--resume") {
            // Before a `--` that ends the options, else last.
            words.insert("--resume", at: words.dropFirst().firstIndex(of: "--") ?? words.endIndex)
        }
        return "cd \(quoted(directory)) && " + words.map(quoted).joined(separator: " ")
    }

    /// `word` as one word of a POSIX shell: as it is when it holds only
    /// characters no shell reads specially, else in single quotes.
    static func quoted(_ word: String) -> String {
        let plain = Set("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_@%+=:,./-".unicodeScalars)
        if !word.isEmpty && word.unicodeScalars.allSatisfy(plain.contains) { return word }
        return "'" + word.replacingOccurrences(of: "'", with: "'\\''") + "'"
    }
}
