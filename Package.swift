// swift-tools-version:6.0
import PackageDescription

// Modules are named after pipeline stages; see README "Layout".
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
        // Counts heap allocations by interposing malloc; linked only into the benchmark.
        .target(name: "CMallocCount", path: "Sources/CMallocCount"),
        .target(name: "ReceiptModel"),
        .target(name: "ReceiptDER", dependencies: ["ReceiptModel"]),
        .target(name: "ReceiptVerify", dependencies: ["ReceiptModel", "ReceiptDER", "COpenSSL"]),
        .target(name: "ReceiptIO", dependencies: ["ReceiptModel", "CZstd"]),
        .target(name: "ReceiptSink", dependencies: ["ReceiptModel", "ReceiptDER", "CZstd"]),
        .target(name: "ReceiptPipeline", dependencies: ["ReceiptModel", "ReceiptDER", "ReceiptVerify", "ReceiptIO", "ReceiptSink"]),
        .target(name: "ReceiptSynth", dependencies: ["ReceiptModel", "COpenSSL", "CZstd"]),
        .executableTarget(
            name: "receiptflow",
            dependencies: ["ReceiptModel", "ReceiptDER", "ReceiptVerify", "ReceiptIO", "ReceiptSink", "ReceiptPipeline", "ReceiptSynth"]
        ),
        .executableTarget(
            name: "ReceiptflowBench",
            dependencies: [
                "ReceiptModel", "ReceiptDER", "ReceiptVerify", "ReceiptIO", "ReceiptSink", "ReceiptPipeline", "ReceiptSynth",
                "CMallocCount", "COpenSSL", "CZstd",
            ],
            path: "Benchmarks/ReceiptflowBench"
        ),
        // Shared by the test targets: where ../shared/fixtures and the committed sample data are.
        .target(name: "ReceiptTestSupport", dependencies: ["ReceiptModel"], path: "Tests/ReceiptTestSupport"),
        .testTarget(name: "ReceiptDERTests", dependencies: ["ReceiptTestSupport", "ReceiptDER", "ReceiptModel"]),
        .testTarget(name: "ReceiptVerifyTests", dependencies: ["ReceiptTestSupport", "ReceiptVerify", "ReceiptDER", "ReceiptModel", "ReceiptSynth"]),
        .testTarget(name: "ReceiptIOTests", dependencies: ["ReceiptTestSupport", "ReceiptIO", "ReceiptModel"]),
        .testTarget(name: "ReceiptSinkTests", dependencies: ["ReceiptTestSupport", "ReceiptSink", "ReceiptModel", "ReceiptDER"]),
        .testTarget(name: "ReceiptPipelineTests", dependencies: ["ReceiptTestSupport", "ReceiptPipeline", "ReceiptSynth", "ReceiptModel", "ReceiptIO", "ReceiptSink"]),
        .testTarget(name: "ReceiptflowCLITests", dependencies: ["ReceiptTestSupport", "receiptflow"]),
        .testTarget(name: "ReceiptSynthTests", dependencies: ["ReceiptTestSupport", "ReceiptSynth", "ReceiptDER", "ReceiptModel"]),
    ]
)
