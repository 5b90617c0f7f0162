/// A file of a run written as a stream under a temporary name beside its final one, synced, and made visible by
/// `commit`: renamed into place at once, or, with a `CommitUnit`, together with the run's other files. A file that
/// is discarded (or never committed) leaves nothing under its final name.
public final class StagedFile {
    private let file: OutputFile

    /// Creates `directory/name` as a hidden temporary file.
    public init(directory: String, name: String, unit: CommitUnit? = nil) throws(SinkError) {
        file = try OutputFile(directory: directory, name: name, unit: unit)
    }

    /// The final path.
    public var path: String { file.path }

    /// Bytes written so far.
    public var bytesWritten: Int64 { file.offset }

    /// Appends bytes (buffered).
    public func write(_ bytes: [UInt8]) throws(SinkError) { try file.write(bytes) }

    /// Flushes, syncs and renames the file into place (or hands it to the unit).
    public func commit() throws(SinkError) { try file.commit() }

    /// Removes the temporary file; the final name is never touched.
    public func discard() { file.discard() }
}
