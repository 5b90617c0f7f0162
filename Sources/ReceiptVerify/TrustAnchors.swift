import COpenSSL

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Why a `--trust-anchor` could not be used. `message` says what was wrong and what to do.
public enum TrustAnchorError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The file could not be opened or read.
    case unreadable(path: String, reason: String)
    /// The file holds no certificate in DER or PEM form.
    case notACertificate(path: String)
    /// The file is larger than any certificate file could reasonably be.
    case tooLarge(path: String, bytes: Int)
    /// No anchor was given at all.
    case noAnchor
    /// A certificate built into the binary does not have its pinned fingerprint: the binary is damaged.
    case builtInMismatch(name: String, sha256: String)
    /// A block of a PEM file (the `block`th, 1-based, whose `-----BEGIN` is on `line`) is not a certificate that
    /// can be read; `reason` says what it is instead.
    case badPEMBlock(path: String, block: Int, line: Int, reason: String)

    public var message: String {
        switch self {
        case .unreadable(let path, let reason):
            return "cannot read trust anchor '\(path)': \(reason). Check the path and its permissions."
        case .notACertificate(let path):
            return "trust anchor '\(path)' holds no X.509 certificate (expected DER or PEM). "
                + "Give a root certificate file such as AppleIncRootCertificate.cer."
        case .tooLarge(let path, let bytes):
            return "trust anchor '\(path)' is \(bytes) bytes, too large for a certificate file. "
                + "Give a root certificate file such as AppleIncRootCertificate.cer."
        case .noAnchor:
            return TrustAnchors.missingAnchorUsage
        case .badPEMBlock(let path, let block, let line, let reason):
            return "trust anchor '\(path)': PEM block \(block) (line \(line)) \(reason). Every block of a trust "
                + "anchor file must be a certificate: fix or remove that block."
        case .builtInMismatch(let name, let sha256):
            return "the built-in \(name) certificate has SHA-256 \(sha256), not its pinned fingerprint: this "
                + "receiptflow binary is damaged. Reinstall it, or give the root with --trust-anchor PATH."
        }
    }

    public var description: String { message }
}

/// The roots of trust: Apple's roots built into the binary (`apple()`, the default), or the certificates given with
/// `--trust-anchor PATH` (repeatable), which replace them. Loaded once into one read-only `X509_STORE` shared by
/// all threads (fill once, then only read).
public final class TrustAnchors: @unchecked Sendable {
    /// One loaded anchor certificate.
    public struct Anchor: Sendable, Equatable {
        /// The file it came from (or a label for in-memory certificates).
        public var source: String
        /// Lowercase hex SHA-256 of the certificate DER.
        public var sha256: String
        /// The subject, RFC 2253 style, for messages.
        public var subject: String
        /// True when this is one of Apple's roots (by fingerprint).
        public var isApple: Bool { TrustAnchors.appleSHA256.contains(sha256) }
    }

    /// SHA-256 fingerprint of Apple Inc. Root (docs/contract.md), lowercase hex.
    public static let appleRootSHA256 = AppleRootCertificates.appleIncRootSHA256
    /// SHA-256 fingerprint of Apple Root CA - G3, lowercase hex.
    public static let appleRootG3SHA256 = AppleRootCertificates.appleRootCAG3SHA256
    /// The fingerprints of every Apple root built into the binary.
    public static let appleSHA256: Set<String> = [appleRootSHA256, appleRootG3SHA256]

    /// The usage message for a run that verifies but was given no anchor.
    public static let missingAnchorUsage =
        "no trust anchor given: pass --trust-anchor PATH with Apple's root certificate "
        + "(AppleIncRootCertificate.cer, published at https://www.apple.com/certificateauthority/), "
        + "or use --no-verify to decode without verifying."

    /// The anchors in the order they were given (a PEM file may contribute several).
    public let anchors: [Anchor]

    /// The shared store; only read after `init`.
    let store: OpaquePointer
    /// DER of every anchor, to recognise a signer that is itself an anchor (Xcode's StoreKit certificate).
    let anchorDER: [[UInt8]]

    /// Apple's roots built into the binary (Apple Inc. Root and Apple Root CA - G3), each checked against its
    /// pinned fingerprint first.
    public static func apple() throws(TrustAnchorError) -> TrustAnchors {
        let builtIn: [(name: String, der: [UInt8], sha256: String)] = [
            ("Apple Inc. Root", AppleRootCertificates.appleIncRoot, AppleRootCertificates.appleIncRootSHA256),
            ("Apple Root CA - G3", AppleRootCertificates.appleRootCAG3, AppleRootCertificates.appleRootCAG3SHA256),
        ]
        for c in builtIn {
            let sha = c.der.withUnsafeBytes { OpenSSL.sha256Hex($0) }
            guard sha == c.sha256 else { throw .builtInMismatch(name: c.name, sha256: sha) }
        }
        return try TrustAnchors(loaded: builtIn.map { ("built-in \($0.name)", $0.der) })
    }

    /// The anchors of a command line: the files given with `--trust-anchor` when there are any (they replace the
    /// defaults), Apple's built-in roots otherwise.
    public static func load(paths: [String]) throws(TrustAnchorError) -> TrustAnchors {
        paths.isEmpty ? try apple() : try TrustAnchors(paths: paths)
    }

    /// Loads every file in `paths` (DER or PEM; a PEM file may hold several certificates).
    public convenience init(paths: [String]) throws(TrustAnchorError) {
        guard !paths.isEmpty else { throw .noAnchor }
        var certs: [(source: String, der: [UInt8])] = []
        for path in paths {
            let bytes = try Self.readFile(path)
            let ders = try Self.certificates(in: bytes, source: path)
            guard !ders.isEmpty else { throw .notACertificate(path: path) }
            certs += ders.map { (path, $0) }
        }
        try self.init(loaded: certs)
    }

    /// Loads certificates given as bytes (DER or PEM), labelled `source` in messages. For tests and embedding.
    public convenience init(certificates: [(source: String, bytes: [UInt8])]) throws(TrustAnchorError) {
        guard !certificates.isEmpty else { throw .noAnchor }
        var certs: [(source: String, der: [UInt8])] = []
        for c in certificates {
            let ders = try Self.certificates(in: c.bytes, source: c.source)
            guard !ders.isEmpty else { throw .notACertificate(path: c.source) }
            certs += ders.map { (c.source, $0) }
        }
        try self.init(loaded: certs)
    }

    private init(loaded: [(source: String, der: [UInt8])]) throws(TrustAnchorError) {
        guard let store = X509_STORE_new() else { fatalError("X509_STORE_new failed") }
        var anchors: [Anchor] = []
        var ders: [[UInt8]] = []
        for (source, der) in loaded {
            let parsed = der.withUnsafeBytes { OpenSSL.certificate(der: $0) }
            guard let x509 = parsed else {
                X509_STORE_free(store)
                throw .notACertificate(path: source)
            }
            defer { X509_free(x509) }
            // The store takes its own reference. Adding the same certificate twice is harmless; OpenSSL
            // ignores the duplicate.
            _ = X509_STORE_add_cert(store, x509)
            ERR_clear_error()
            let sha = der.withUnsafeBytes { OpenSSL.sha256Hex($0) }
            anchors.append(Anchor(source: source, sha256: sha, subject: OpenSSL.subjectLine(x509)))
            ders.append(der)
        }
        self.store = store
        self.anchors = anchors
        self.anchorDER = ders
    }

    deinit { X509_STORE_free(store) }

    /// True when one of Apple's roots is among the anchors.
    public var includesApple: Bool { anchors.contains { $0.isApple } }

    /// The one-line notice for an anchor that is not one of Apple's roots; `nil` for Apple's.
    public static func notice(for anchor: Anchor) -> String? {
        guard !anchor.isApple else { return nil }
        return "note: trust anchor '\(anchor.source)' (\(anchor.subject), SHA-256 \(anchor.sha256)) is not "
            + "Apple Inc. Root; receipts chaining to it will be accepted."
    }

    /// The notices for every non-Apple anchor, in order.
    public var notices: [String] { anchors.compactMap { Self.notice(for: $0) } }

    /// One short line naming every non-Apple anchor, for a command to print once per run; `nil` when every
    /// anchor is Apple's.
    public var notice: String? {
        let others = anchors.filter { !$0.isApple }
        guard !others.isEmpty else { return nil }
        let names = others.map { "'\($0.source)' (SHA-256 \($0.sha256.prefix(8))…)" }.joined(separator: ", ")
        return "note: receipts that chain to \(names) are accepted: "
            + (others.count == 1 ? "it is not an Apple root." : "they are not Apple roots.")
    }

    /// True when `der` is byte-for-byte one of the anchors.
    func isAnchor(_ der: UnsafeRawBufferPointer) -> Bool {
        anchorDER.contains { a in
            a.count == der.count && a.withUnsafeBytes { memcmp($0.baseAddress!, der.baseAddress!, der.count) == 0 }
        }
    }

    // MARK: - Loading

    /// Certificate files are a few KB; anything past this is not one.
    static let maximumFileSize = 1 << 20

    private static func readFile(_ path: String) throws(TrustAnchorError) -> [UInt8] {
        guard let f = fopen(path, "rb") else {
            throw .unreadable(path: path, reason: String(cString: strerror(errno)))
        }
        defer { fclose(f) }
        var out: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 16384)
        while true {
            let n = chunk.withUnsafeMutableBytes { fread($0.baseAddress, 1, $0.count, f) }
            if n > 0 { out += chunk[0..<n] }
            if out.count > maximumFileSize { throw .tooLarge(path: path, bytes: out.count) }
            if n < chunk.count {
                if ferror(f) != 0 { throw .unreadable(path: path, reason: String(cString: strerror(errno))) }
                break
            }
        }
        return out
    }

    /// The DER of every certificate in `bytes`: every block of a PEM file, each of which must be a certificate
    /// (a block that is not, or that is damaged, is refused, naming it: a silently skipped block would be a root
    /// the user believes trusted), or the bytes themselves as DER. Empty when there is no certificate at all.
    static func certificates(in bytes: [UInt8], source: String) throws(TrustAnchorError) -> [[UInt8]] {
        let pemMarker = Array("-----BEGIN".utf8)
        let looksPEM =
            bytes.count >= pemMarker.count
            && (0...(bytes.count - pemMarker.count)).contains { i in
                bytes[i..<(i + pemMarker.count)].elementsEqual(pemMarker)
            }
        if !looksPEM {
            let ok = bytes.withUnsafeBytes { raw -> Bool in
                guard let x = OpenSSL.certificate(der: raw) else { return false }
                X509_free(x)
                return true
            }
            return ok ? [bytes] : []
        }
        var result: [[UInt8]] = []
        for block in PEMBlock.all(in: bytes) {
            func refuse(_ reason: String) -> TrustAnchorError {
                .badPEMBlock(path: source, block: block.index, line: block.line, reason: reason)
            }
            guard let range = block.range else { throw refuse("has no -----END \(block.label)----- line") }
            guard PEMBlock.certificateLabels.contains(block.label) else {
                throw refuse("is a \(block.label), not a certificate")
            }
            switch Self.decodeCertificate(bytes[range]) {
            case .success(let der): result.append(der)
            case .failure(let failure): throw refuse("is not a readable certificate (\(failure.reason))")
            }
        }
        return result
    }

    /// The DER of the one certificate in a PEM block, or why there is none.
    private static func decodeCertificate(_ block: ArraySlice<UInt8>) -> Result<[UInt8], PEMFailure> {
        block.withUnsafeBytes { raw in
            guard let bio = BIO_new_mem_buf(raw.baseAddress, Int32(raw.count)) else {
                return .failure(PEMFailure("out of memory"))
            }
            defer { BIO_free(bio) }
            // The BIO reads `raw` in place, so every read stays inside this closure (openssl-notes.md B.1).
            var name: UnsafeMutablePointer<CChar>? = nil
            var header: UnsafeMutablePointer<CChar>? = nil
            var data: UnsafeMutablePointer<UInt8>? = nil
            var length = 0
            guard PEM_read_bio(bio, &name, &header, &data, &length) == 1, let data else {
                return .failure(PEMFailure(OpenSSL.takeErrorText()))
            }
            defer {
                rf_OPENSSL_free(name)
                rf_OPENSSL_free(header)
                rf_OPENSSL_free(data)
            }
            guard let x = OpenSSL.certificate(der: UnsafeRawBufferPointer(start: data, count: length)) else {
                return .failure(PEMFailure("its content is not one DER certificate"))
            }
            X509_free(x)
            return .success(Array(UnsafeRawBufferPointer(start: data, count: length)))
        }
    }

    /// Why a PEM block could not be decoded, in OpenSSL's words or ours.
    private struct PEMFailure: Error {
        var reason: String
        init(_ reason: String) { self.reason = reason }
    }
}

/// One `-----BEGIN LABEL-----` ... `-----END LABEL-----` block of a PEM file. Text between blocks (comments,
/// `openssl x509 -text` output) is allowed, as OpenSSL allows it.
struct PEMBlock: Equatable {
    /// The labels of an X.509 certificate.
    static let certificateLabels: Set<String> = ["CERTIFICATE", "X509 CERTIFICATE"]

    /// 1-based position of the block in the file.
    var index: Int
    /// 1-based line of its `-----BEGIN` line.
    var line: Int
    var label: String
    /// From the start of the BEGIN line to the end of the END line (its newline included); nil when the file has
    /// no END line for the block before the next BEGIN or the end of the file.
    var range: Range<Int>?

    /// The blocks of `bytes`, in order.
    static func all(in bytes: [UInt8]) -> [PEMBlock] {
        var blocks: [PEMBlock] = []
        var open: (line: Int, label: String, start: Int)? = nil
        func close(_ range: Range<Int>?) {
            guard let o = open else { return }
            blocks.append(PEMBlock(index: blocks.count + 1, line: o.line, label: o.label, range: range))
            open = nil
        }
        var start = 0
        var lineNumber = 1
        while start < bytes.count {
            var end = start
            while end < bytes.count && bytes[end] != 0x0A { end += 1 }
            let next = min(end + 1, bytes.count)
            // The line without its terminator and trailing blanks (`\r` of CRLF files included).
            var last = end
            while last > start && (bytes[last - 1] == 0x0D || bytes[last - 1] == 0x20 || bytes[last - 1] == 0x09) {
                last -= 1
            }
            let text = String(decoding: bytes[start..<last], as: UTF8.self)
            if let label = Self.label(text, "-----BEGIN ") {
                close(nil)  // a BEGIN before the previous block's END: that block has none
                open = (lineNumber, label, start)
            } else if let label = Self.label(text, "-----END "), let o = open, label == o.label {
                close(o.start..<next)
            }
            start = next
            lineNumber += 1
        }
        close(nil)
        return blocks
    }

    /// The label of a `-----BEGIN LABEL-----` (or END) line, or nil when `text` is not one.
    private static func label(_ text: String, _ prefix: String) -> String? {
        guard text.hasPrefix(prefix), text.hasSuffix("-----"), text.count >= prefix.count + 5 else { return nil }
        return String(text.dropFirst(prefix.count).dropLast(5))
    }
}
