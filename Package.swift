// swift-tools-version:6.0
import PackageDescription

// Modules are named after pipeline stages; see README "Layout".

// ReceiptModel (the column tables) and ReceiptSink (the writers) skip Swift's *dynamic* exclusivity checks (static
// ones still apply): there they are swift_beginAccess/endAccess calls on class properties for every value written,
// and receiptflow-bench's write stage takes about a third longer with them. Every other module keeps them, the
// modules that read untrusted bytes (ReceiptDER, ReceiptIO) in particular.
let hotPath: [SwiftSetting] = [.unsafeFlags(["-enforce-exclusivity=unchecked"])]

let package = Package(
    name: "receiptflow",
    platforms: [.macOS(.v13)],
    products: [
        .executable(name: "receiptflow", targets: ["receiptflow"]),
        .executable(name: "receiptflow-bench", targets: ["ReceiptflowBench"]),
    ],
    targets: [
        .systemLibrary(name: "COpenSSL", pkgConfig: "openssl", providers: [.apt(["libssl-dev"])]),
        .systemLibrary(name: "CZstd", pkgConfig: "libzstd", providers: [.apt(["libzstd-dev"])]),
        .systemLibrary(name: "CZlib", pkgConfig: "zlib", providers: [.apt(["zlib1g-dev"])]),
        // Counts heap allocations by interposing malloc; linked only into the benchmark.
        .target(name: "CMallocCount", path: "Sources/CMallocCount"),
        // The benchmark's plain C loop: the unavoidable work per record, the baseline of the export's gates.
        .target(name: "CReceiptLoop", dependencies: ["COpenSSL", "CZstd"], path: "Benchmarks/CReceiptLoop"),
        // Kernels chosen at run time: AVX2 for base64 blocks and JSON string runs (ReceiptIO keeps the logic). Digests
        // are never computed here: OpenSSL computes every one (ReceiptVerify's ContentHasher).
        .target(name: "CSIMD", path: "Sources/CSIMD"),
        .target(name: "ReceiptModel", swiftSettings: hotPath),
        .target(name: "ReceiptDER", dependencies: ["ReceiptModel"]),
        .target(name: "ReceiptVerify", dependencies: ["ReceiptModel", "ReceiptDER", "COpenSSL"]),
        .target(name: "ReceiptIO", dependencies: ["ReceiptModel", "CZstd", "CZlib", "CSIMD"]),
        .target(name: "ReceiptSink", dependencies: ["ReceiptModel", "ReceiptDER", "CZstd"], swiftSettings: hotPath),
        .target(name: "ReceiptHistory", dependencies: ["ReceiptModel", "ReceiptSink", "COpenSSL", "CZstd"]),
        .target(name: "ReceiptPipeline", dependencies: ["ReceiptModel", "ReceiptDER", "ReceiptVerify", "ReceiptIO", "ReceiptSink", "ReceiptHistory", "ReceiptJWS"]),
        .target(name: "ReceiptJWS", dependencies: ["ReceiptModel", "ReceiptVerify"]),
        // The one-page HTML report of a run (`receiptflow report`): aggregates made while exporting, the page.
        .target(name: "ReceiptReport", dependencies: ["ReceiptModel", "ReceiptSink"]),
        // The command-line tools' argument scanner (the product and the test-only SinkHarness).
        .target(name: "CommandArguments"),
        .target(name: "ReceiptSynth", dependencies: ["ReceiptModel", "COpenSSL", "CZstd"]),
        .executableTarget(
            name: "receiptflow",
            dependencies: [
                "ReceiptModel", "ReceiptDER", "ReceiptVerify", "ReceiptIO", "ReceiptSink", "ReceiptPipeline", "ReceiptSynth",
                "ReceiptJWS", "ReceiptReport",
                "COpenSSL",  // `receiptflow bench` measures the RSA ceiling through OpenSSL
                "CommandArguments",
            ]
        ),
        .executableTarget(
            name: "ReceiptflowBench",
            dependencies: [
                "ReceiptModel", "ReceiptDER", "ReceiptVerify", "ReceiptIO", "ReceiptSink", "ReceiptPipeline", "ReceiptSynth",
                "ReceiptHistory", "ReceiptJWS", "CMallocCount", "COpenSSL", "CZstd", "CReceiptLoop",
            ],
            path: "Benchmarks/ReceiptflowBench"
        ),
        // Drives the output writers for the Python reader checks (Tests/python); not part of the product.
        .executableTarget(
            name: "SinkHarness", dependencies: ["ReceiptModel", "ReceiptSink", "CommandArguments"],
            path: "Tests/SinkHarness"),
        // Shared by the test targets: where ../shared/fixtures and the committed sample data are.
        .target(name: "ReceiptTestSupport", dependencies: ["ReceiptModel"], path: "Tests/ReceiptTestSupport"),
        .testTarget(name: "ReceiptDERTests", dependencies: ["ReceiptTestSupport", "ReceiptDER", "ReceiptModel", "ReceiptSynth"]),
        .testTarget(name: "ReceiptVerifyTests", dependencies: ["ReceiptTestSupport", "ReceiptVerify", "ReceiptDER", "ReceiptModel", "ReceiptSynth"]),
        .testTarget(name: "ReceiptIOTests", dependencies: ["ReceiptTestSupport", "ReceiptIO", "ReceiptModel", "ReceiptSynth"]),
        .testTarget(name: "ReceiptSinkTests", dependencies: ["ReceiptTestSupport", "ReceiptSink", "ReceiptModel", "ReceiptDER", "CZstd"]),
        .testTarget(name: "ReceiptPipelineTests", dependencies: ["ReceiptTestSupport", "ReceiptPipeline", "ReceiptSynth", "ReceiptModel", "ReceiptIO", "ReceiptSink"]),
        .testTarget(
            name: "ReceiptflowCLITests",
            // The hardening tests also build hostile receipts (ReceiptSynth) and drive the parsers directly.
            dependencies: ["ReceiptTestSupport", "receiptflow", "ReceiptSynth", "ReceiptDER", "ReceiptIO", "ReceiptModel"]
        ),
        .testTarget(name: "ReceiptHistoryTests", dependencies: ["ReceiptHistory", "ReceiptModel", "ReceiptSink"]),
        .testTarget(name: "ReceiptJWSTests", dependencies: ["ReceiptTestSupport", "ReceiptJWS", "ReceiptVerify", "ReceiptModel", "ReceiptSynth"]),
        .testTarget(name: "ReceiptReportTests", dependencies: ["ReceiptReport", "ReceiptModel", "ReceiptSink", "ReceiptHistory"]),
        .testTarget(name: "ReceiptSynthTests", dependencies: ["ReceiptTestSupport", "ReceiptSynth", "ReceiptDER", "ReceiptModel"]),
    ]
)
