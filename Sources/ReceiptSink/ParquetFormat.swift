import ReceiptModel

/// Enum values and struct field ids of parquet.thrift that the writer uses (parquet-notes.md A.3).
enum Parquet {
    static let magic: [UInt8] = Array("PAR1".utf8)

    /// Physical types.
    enum PhysicalType: Int32 {
        case boolean = 0
        case int32 = 1
        case int64 = 2
        case byteArray = 6
    }

    enum Encoding: Int32 {
        case plain = 0
        case rle = 3
        case rleDictionary = 8
    }

    enum PageType: Int32 {
        case dataPage = 0
        case dictionaryPage = 2
    }

    enum Repetition: Int32 {
        case required = 0
        case optional = 1
    }

    enum ConvertedType: Int32 {
        case utf8 = 0
        case date = 6
        case timestampMillis = 9
    }

    static let codecZstd: Int32 = 6

    static func physicalType(_ kind: ColumnKind) -> PhysicalType {
        switch kind {
        case .string: return .byteArray
        case .int64, .timestampMillis: return .int64
        case .int32, .date: return .int32
        case .bool: return .boolean
        }
    }
}
