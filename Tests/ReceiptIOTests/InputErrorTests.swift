import Foundation
import ReceiptIO
import Testing

/// Input failures are codes with the input they concern; callers switch on the code, users read the message.
@Suite struct InputErrorTests {
    /// The error of opening `path` one of three ways (0: `InputOpener.open`, 1: `FileByteSource`, 2: `probe`).
    private static func openFailure(_ path: String, way: Int) -> InputError? {
        do throws(InputError) {
            switch way {
            case 0: _ = try InputOpener.open(path)
            case 1: _ = try FileByteSource(path: path)
            default: _ = try InputOpener.probe(path)
            }
            return nil
        } catch {
            return error
        }
    }

    /// The error of reading all of `path` through `InputOpener`.
    private static func readFailure(_ path: String) -> InputError? {
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 1 << 16, alignment: 16)
        defer { buffer.deallocate() }
        do throws(InputError) {
            let source = try InputOpener.open(path)
            while try source.read(into: buffer) > 0 {}
            return nil
        } catch {
            return error
        }
    }

    private static func tempDir() throws -> URL {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("rf-input-error-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        return dir
    }

    @Test func aMissingFileIsCannotOpenWithThePathAndTheSystemsReason() throws {
        for way in 0..<3 {
            let e = try #require(Self.openFailure("/nonexistent/r.ndjson", way: way))
            #expect(e.code == .cannotOpen)
            #expect(e.input == "/nonexistent/r.ndjson")
            #expect(e.reason == String(cString: strerror(ENOENT)))
            #expect(e.message.contains("cannot open input '/nonexistent/r.ndjson'"))
        }
    }

    @Test func aDirectoryIsItsOwnCode() throws {
        let dir = try Self.tempDir()
        defer { try? FileManager.default.removeItem(at: dir) }
        let e = try #require(Self.openFailure(dir.path, way: 2))
        #expect(e == InputError(.isDirectory, input: dir.path))
        #expect(e.message == "input '\(dir.path)' is a directory; give the files inside it instead")
    }

    @Test func damagedCompressedInputsSayWhichCompressionAndWhatIsWrong() throws {
        let dir = try Self.tempDir()
        defer { try? FileManager.default.removeItem(at: dir) }
        let frame = zstdFrame(Array(String(repeating: "QUJD\n", count: 400).utf8))
        let cases: [(String, [UInt8], InputError.Code)] = [
            ("truncated.zst", Array(frame.dropLast(7)), .truncated),
            ("corrupt.zst", Array(frame.prefix(4)) + [UInt8](repeating: 0xFF, count: 64), .corrupt),
            ("garbage.gz", [0x1F, 0x8B, 0x08, 0x00] + [UInt8](repeating: 0xEE, count: 64), .corrupt),
        ]
        for (name, bytes, code) in cases {
            let path = dir.appendingPathComponent(name).path
            try Data(bytes).write(to: URL(fileURLWithPath: path))
            let e = Self.readFailure(path)
            #expect(e?.code == code, "\(name): \(e?.message ?? "no error")")
            #expect(e?.compression == (name.hasSuffix(".gz") ? .gzip : .zstd), "\(name)")
            #expect(e?.input == path)
            #expect(e?.message.contains("'\(path)'") == true)
        }
    }

    @Test func standardInputIsNamedAsSuch() {
        #expect(InputError(.cannotRead, input: "-", reason: "EIO").message == "cannot read input 'standard input': EIO")
        #expect(InputError(.truncated, input: "-", compression: .gzip).message.contains("'standard input'"))
    }
}
