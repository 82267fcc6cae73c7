// Engine.Configuration: complete at init, and the one validation both the
// C face and the Swift API run, naming options as the caller spells them.
import XCTest
@testable import RestorationCore

final class ConfigurationTests: XCTestCase {
    let names = Engine.Configuration.OptionNames(
        archivePath: "AP", appVersion: "AV", idiom: "ID", autosaveDelay: "AD",
        autosaveMaxDelay: "AMD", generations: "GEN", anArchivePath: "an AP")

    func failure(_ c: Engine.Configuration) -> RestorationFailure? {
        do { try c.validate(naming: names); return nil } catch { return error }
    }

    func testDefaultsAreValidAndComplete() {
        let c = Engine.Configuration()
        XCTAssertNil(failure(c))
        XCTAssertTrue(c.crashGuard)
        XCTAssertFalse(c.quarantine)
        XCTAssertEqual(c.signalDeadlineMs, 1000)
        XCTAssertEqual(c.budgetPolicy, .warn)
        let all = Engine.Configuration(archivePath: "/tmp/x.rst", quarantine: true, carrySaves: 2, sizeBudget: 9,
                                       budgetPolicy: .trim, signalDeadlineMs: 5)
        XCTAssertTrue(all.quarantine)
        XCTAssertEqual(all.carrySaves, 2)
        XCTAssertEqual(all.sizeBudget, 9)
        XCTAssertEqual(all.budgetPolicy, .trim)
        XCTAssertEqual(all.signalDeadlineMs, 5)
    }

    func testEachCheckNamesItsOption() {
        var f = failure(.init(archivePath: ""))
        XCTAssertEqual(f?.status, .invalid); XCTAssertEqual(f?.message, "AP is empty")
        f = failure(.init(appVersion: String(repeating: "v", count: 5000)))
        XCTAssertEqual(f?.status, .limit); XCTAssertTrue(f?.message.hasPrefix("AV is longer than") ?? false)
        f = failure(.init(idiom: String(repeating: "i", count: 5000)))
        XCTAssertEqual(f?.status, .limit); XCTAssertTrue(f?.message.hasPrefix("ID is longer than") ?? false)
        f = failure(.init(archivePath: "/tmp/x.rst", generations: FileStore.maxGenerations + 1))
        XCTAssertEqual(f?.message, "GEN is \(FileStore.maxGenerations + 1); at most \(FileStore.maxGenerations) generations are kept")
        f = failure(.init(archivePath: "/tmp/x.rst", generations: -1))
        XCTAssertEqual(f?.status, .invalid)
        f = failure(.init(archivePath: "/tmp/x.rst", autosaveDelayMs: 100, autosaveMaxDelayMs: 50))
        XCTAssertEqual(f?.message, "AMD (50) is below AD (100)")
        f = failure(.init(autosaveDelayMs: 100))
        XCTAssertEqual(f?.message, "AD and GEN need an AP")
        XCTAssertNil(failure(.init(autosaveDelayMs: 100, store: MemoryArchiveStore())), "a store is an archive to save to")
    }
}
