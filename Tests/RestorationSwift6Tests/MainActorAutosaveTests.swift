// Swift 6 language mode (this target's setting), strict concurrency: UI
// objects on the main actor adopt StateRestoring and autosave on the main
// queue. With InferIsolatedConformances (on in Swift 6.2 "approachable
// concurrency" builds) a plain `: StateRestoring` on a @MainActor class is
// a main-actor conformance; without it, write `: @MainActor StateRestoring`
// (SE-0470). Both are here.
import Foundation
import Restoration
import XCTest

/// A view controller as a GTK or AppKit-like app has it: main-actor state.
@MainActor final class EditorScreen: StateRestoring {
    let restorationIdentifier: String? = "Editor"
    var text = ""
    var scroll = 0.0

    func encodeRestorableState(with coder: RestorationCoder) throws {
        try coder.encode(text, forKey: "text")
        try coder.encode(scroll, forKey: "scroll")
    }

    func decodeRestorableState(with coder: RestorationCoder) throws {
        text = try coder.decode(String.self, forKey: "text") ?? ""
        scroll = try coder.decode(Double.self, forKey: "scroll") ?? 0
    }
}

/// The explicit spelling, valid in Swift 6 mode without the upcoming feature.
@MainActor final class Sidebar: @MainActor StateRestoring {
    let restorationIdentifier: String? = "Sidebar"
    var width = 200
    func encodeRestorableState(with coder: RestorationCoder) throws { try coder.encode(width, forKey: "width") }
    func decodeRestorableState(with coder: RestorationCoder) throws { width = try coder.decode(Int.self, forKey: "width") ?? 0 }
}

final class MainActorAutosaveTests: XCTestCase {
    func temporaryArchive() -> String {
        let dir = NSTemporaryDirectory() + "rst-swift6-\(UUID().uuidString)"
        try? FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        return dir + "/state.rst"
    }

    /// Marked dirty on the main actor, saved by the main-queue dispatcher
    /// after the delay (a save event arrives), restored by a new engine
    /// with reason RELAUNCH.
    @MainActor func testMainActorScreenAutosavesOnTheMainQueue() async throws {
        let path = temporaryArchive()
        var options = RestorationEngine.Options(archivePath: path)
        options.autosaveDelay = .milliseconds(50)
        let engine = try RestorationEngine(options: options)
        let editor = EditorScreen(), sidebar = Sidebar()
        try engine.register(editor)
        try engine.register(sidebar)
        try engine.autosaveOnMainQueue()
        let events = engine.saveEvents
        editor.text = "draft"
        editor.scroll = 42.5
        sidebar.width = 320
        engine.markDirty()
        XCTAssertTrue(engine.isDirty)
        XCTAssertNotNil(engine.nextTimeout)
        var saved = false
        for await event in events {
            if case .saved(signal: nil) = event { saved = true; break }
            if case .failed(let e, _, _) = event { XCTFail("autosave failed: \(e)"); break }
        }
        XCTAssertTrue(saved)
        XCTAssertFalse(engine.isDirty)
        XCTAssertNil(engine.nextTimeout)

        let again = try RestorationEngine(archivePath: path)
        let editor2 = EditorScreen(), sidebar2 = Sidebar()
        try again.register(editor2)
        try again.register(sidebar2)
        var reason: RestorationEngine.RestoreReason?
        again.shouldRestore = { info in reason = info.restoreReason; return true }
        try again.restore()
        XCTAssertEqual(editor2.text, "draft")
        XCTAssertEqual(editor2.scroll, 42.5)
        XCTAssertEqual(sidebar2.width, 320)
        XCTAssertEqual(reason, .relaunch)
        XCTAssertEqual(again.lastRestoreReason, .relaunch)
        withExtendedLifetime((engine, editor, sidebar)) {}
    }

    /// A main-actor object is never called off the main thread: a save on
    /// another thread fails for it (RestorationError.state) instead of racing.
    @MainActor func testMainActorObjectIsNotEncodedOffTheMainThread() async throws {
        let path = temporaryArchive()
        let engine = try RestorationEngine(archivePath: path)
        let editor = EditorScreen()
        try engine.register(editor)
        let result = await Task.detached { () -> RestorationError? in
            do { try engine.save(); return nil } catch { return error as? RestorationError }
        }.value
        guard case .state(let message)? = result else { return XCTFail("saved off the main thread: \(String(describing: result))") }
        XCTAssertTrue(message.contains("main actor"), message)
        try engine.save()   // on the main actor: fine
        withExtendedLifetime(editor) {}
    }

    /// Generations and reasons through the Swift API.
    @MainActor func testGenerationsAndReasons() throws {
        let path = temporaryArchive()
        var options = RestorationEngine.Options(archivePath: path)
        options.generations = 2
        let engine = try RestorationEngine(options: options)
        let editor = EditorScreen()
        try engine.register(editor)
        XCTAssertEqual(engine.lastRestoreReason, .firstLaunch)
        for t in ["a", "b", "c"] {
            editor.text = t
            engine.markDirty()
            try engine.flush()
        }
        try engine.restore(generation: 2)
        XCTAssertEqual(editor.text, "a")
        XCTAssertEqual(engine.lastRestoreReason, .fallback)
        try engine.restore(generation: 0)
        XCTAssertEqual(editor.text, "c")
        XCTAssertEqual(engine.lastRestoreReason, .relaunch)
        XCTAssertThrowsError(try engine.restore(generation: 3))
        XCTAssertEqual(RestorationEngine.RestoreReason.recover.description, "RST_REASON_RECOVER")
        options.generations = 17
        XCTAssertThrowsError(try RestorationEngine(options: options))
    }
}
