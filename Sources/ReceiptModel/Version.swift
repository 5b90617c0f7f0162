/// The tool's version, written into Parquet `created_by`, summaries and `--version`.
public enum ReceiptflowVersion {
    public static let string = "0.1.0"
}
