import ReceiptModel
import ReceiptPipeline
import Testing

/// One classification of environment values for every consumer, and what `--environment` accepts of each class.
@Suite struct RecordEnvironmentTests {
    @Test(
        arguments: [
            ("Production", RecordEnvironment.production), ("ProductionVPP", .production), ("Sandbox", .sandbox),
            ("ProductionSandbox", .sandbox), ("ProductionVPPSandbox", .sandbox), ("Xcode", .xcode),
            ("LocalTesting", .localTesting), ("", .absent), ("xcode", .production),
        ] as [(String, RecordEnvironment)])
    func classifiesEachValueApplesWrites(value: String, environment: RecordEnvironment) {
        #expect(RecordEnvironment(value) == environment)
        var copy = value
        #expect(copy.withUTF8 { RecordEnvironment(UnsafeRawBufferPointer($0)) } == environment)
    }

    @Test func anAbsentValueIsNoEnvironment() {
        #expect(RecordEnvironment(nil as String?) == .absent)
        #expect(RecordEnvironment(nil as UnsafeRawBufferPointer?) == .absent)
        #expect(RecordEnvironment.absent.name == nil)
    }

    @Test func onlyXcodeAndLocalTestingAreStoreKitTesting() {
        let testing = RecordEnvironment.allCases.filter(\.isStoreKitTesting)
        #expect(testing == [.xcode, .localTesting])
    }

    /// The verifyReceipt-shaped `environment` of a receipt is its class's name.
    @Test func aReceiptsEnvironmentFieldIsItsClassName() {
        var r = Receipt()
        for (type, name) in [
            ("ProductionSandbox", "Sandbox"), ("ProductionVPP", "Production"), ("Xcode", "Xcode"),
            ("LocalTesting", "LocalTesting"),
        ] {
            r.receiptType = type
            #expect(r.environment == name)
        }
        r.receiptType = nil
        #expect(r.environment == nil)
    }

    @Test(arguments: RecordEnvironment.allCases)
    func eachRequirementAcceptsItsOwnClassOnly(environment: RecordEnvironment) {
        #expect(EnvironmentRequirement.any.rejection(environment) == nil)
        #expect(
            EnvironmentRequirement.production.rejection(environment)
                == (environment == .production ? nil : .sandboxReceiptInProduction))
        #expect(
            EnvironmentRequirement.sandbox.rejection(environment)
                == (environment == .sandbox ? nil : .productionReceiptInSandbox))
    }
}
