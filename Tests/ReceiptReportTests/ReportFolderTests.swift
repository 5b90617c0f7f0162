import Foundation
import Testing

@testable import ReceiptReport

/// `receiptflow report DIR` reads a finished run's folder: it refuses one without `summary.json`, and writes the
/// page beside it.
@Suite struct ReportFolderTests {
    static func folder(_ name: String) throws -> String {
        let path = NSTemporaryDirectory() + "report-folder-\(name)-\(getpid())"
        try? FileManager.default.removeItem(atPath: path)
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        return path
    }

    @Test func aFolderWithoutASummaryHoldsNoCompleteRun() throws {
        let dir = try Self.folder("empty")
        defer { try? FileManager.default.removeItem(atPath: dir) }
        try Data("source\n".utf8).write(to: URL(fileURLWithPath: dir + "/receipts.csv"))
        #expect(throws: ReportError(.notACompleteRun, path: dir)) { try ReportFolder.write(in: dir) }
        #expect(ReportError(.notACompleteRun, path: dir).status == 2)
        #expect(throws: ReportError(.notAFolder, path: dir + "/missing")) {
            try ReportFolder.write(in: dir + "/missing")
        }
        #expect(!FileManager.default.fileExists(atPath: dir + "/report.html"))
    }

    @Test func damagedFilesAreNamed() throws {
        let dir = try Self.folder("damaged")
        defer { try? FileManager.default.removeItem(atPath: dir) }
        try Data("[1]".utf8).write(to: URL(fileURLWithPath: dir + "/summary.json"))
        #expect(throws: ReportError(.unreadableSummary, path: dir + "/summary.json")) {
            try ReportFolder.write(in: dir)
        }
        try Data(ReportPageTests.summary).write(to: URL(fileURLWithPath: dir + "/summary.json"))
        try Data("{}".utf8).write(to: URL(fileURLWithPath: dir + "/report-data.json"))
        #expect(throws: ReportError(.unreadableData, path: dir + "/report-data.json")) {
            try ReportFolder.write(in: dir)
        }
    }

    @Test func thePageIsWrittenFromTheSummaryAndTheAggregates() throws {
        let dir = try Self.folder("run")
        defer { try? FileManager.default.removeItem(atPath: dir) }
        try Data(ReportPageTests.summary).write(to: URL(fileURLWithPath: dir + "/summary.json"))
        try Data(ReportPageTests.data().encoded()).write(to: URL(fileURLWithPath: dir + "/report-data.json"))
        let path = try ReportFolder.write(in: dir)
        #expect(path == dir + "/report.html")
        let html = try String(contentsOfFile: path, encoding: .utf8)
        #expect(html.contains("data-metric=\"records\">12,345<"))
        #expect(html.contains("&lt;script&gt;alert(1)&lt;/script&gt;"))
        #expect(!html.contains("Not recorded for this run"))
        #expect(html.contains(" UTC</td>"))  // the commit time, from summary.json's modification time
    }
}
