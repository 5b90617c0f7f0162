/// A file a sink writes: its directory and its final name there (the temporary name sits beside it).
struct FileLocation: Sendable, Equatable {
    var directory: String
    var name: String
}

/// Where a sink writes its two tables: `receipts.<ext>` and `transactions.<ext>` side by side, or one part of
/// each table inside the table's folder (`receipts/part-00000.<ext>`).
struct TableFiles: Sendable, Equatable {
    var receipts: FileLocation
    var transactions: FileLocation
    var renewals: FileLocation
    /// The run's commit unit when the files are renamed together with the others (`CommitUnit`).
    var unit: CommitUnit? = nil

    static func == (a: TableFiles, b: TableFiles) -> Bool {
        a.receipts == b.receipts && a.transactions == b.transactions && a.renewals == b.renewals && a.unit === b.unit
    }

    /// The single-file layout of a run without parts.
    static func single(_ directory: String, _ format: OutputFormat, unit: CommitUnit? = nil) -> TableFiles {
        let ext = format.fileExtension
        return TableFiles(
            receipts: FileLocation(directory: directory, name: "receipts.\(ext)"),
            transactions: FileLocation(directory: directory, name: "transactions.\(ext)"),
            renewals: FileLocation(directory: directory, name: "renewals.\(ext)"), unit: unit)
    }

    /// Part `index` of each table, in the tables' folders under `directory`.
    static func part(_ index: Int, in directory: String, _ format: OutputFormat) -> TableFiles {
        let name = PartWriter.fileName(index, format)
        return TableFiles(
            receipts: FileLocation(directory: join(directory, "receipts"), name: name),
            transactions: FileLocation(directory: join(directory, "transactions"), name: name),
            renewals: FileLocation(directory: join(directory, "renewals"), name: name))
    }
}

/// `directory/name`, without doubling a trailing slash.
func join(_ directory: String, _ name: String) -> String {
    directory.hasSuffix("/") ? directory + name : directory + "/" + name
}
