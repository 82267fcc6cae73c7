import Foundation
import XCTest
@testable import Restoration

final class ModelAssociationTests: XCTestCase {
    struct Country: Identifiable { var id: String; var name: String }

    func testSelectionAndFirstVisibleRowFollowTheirModelsAfterInsertionsAndDeletions() {
        let before = ModelAssociation(identifiers: ["DE", "DK", "FI", "NL", "NO", "NZ", "SE"])
        let state = ListRestorationState(selectedRows: [4, 1], visibleRows: 3..<6, in: before)
        XCTAssertEqual(state.selection, ["NO", "DK"])
        XCTAssertEqual(state.visible, ["NL", "NO", "NZ"])
        XCTAssertEqual(state.selectedIdentifier, "NO")
        XCTAssertEqual(state.firstVisibleIdentifier, "NL")

        // Two rows inserted above, one (DK) deleted.
        let after = ModelAssociation(identifiers: ["AT", "BE", "DE", "FI", "NL", "NO", "NZ", "SE"])
        XCTAssertEqual(state.selectedRows(in: after), [5], "NO moved from 4 to 5; DK is gone")
        XCTAssertEqual(state.firstVisibleRow(in: after), 4, "NL moved from 3 to 4")

        // The first visible row itself deleted: the next saved visible model wins.
        let withoutNL = ModelAssociation(identifiers: ["AT", "NO", "NZ"])
        XCTAssertEqual(state.firstVisibleRow(in: withoutNL), 1)
        XCTAssertEqual(state.selectedRows(in: withoutNL), [1])

        // Everything gone.
        let empty = ModelAssociation(identifiers: [])
        XCTAssertEqual(state.selectedRows(in: empty), [])
        XCTAssertNil(state.firstVisibleRow(in: empty))
    }

    func testOutOfRangeRowsAreLeftOutAndModelsCanBeAnyCollection() {
        let countries = [Country(id: "NO", name: "Norway"), Country(id: "NZ", name: "New Zealand")]
        let byID = ModelAssociation(countries)
        let byName = ModelAssociation(countries, id: \.name)
        XCTAssertEqual(byID.identifiers, ["NO", "NZ"])
        XCTAssertEqual(byName.index(forElementWithModelIdentifier: "New Zealand"), 1)
        XCTAssertNil(byID.modelIdentifier(forElementAt: 5))
        XCTAssertNil(byID.modelIdentifier(forElementAt: -1))
        let state = ListRestorationState(selectedRows: [0, 9], visibleRows: [1, 2], in: byID)
        XCTAssertEqual(state.selection, ["NO"])
        XCTAssertEqual(state.visible, ["NZ"])
    }

    /// A data source of its own: the protocol is all the helper needs.
    struct Reversed: ModelAssociating {
        var ids: [String]
        func modelIdentifier(forElementAt index: Int) -> String? { ids.indices.contains(index) ? ids[ids.count - 1 - index] : nil }
        func index(forElementWithModelIdentifier identifier: String) -> Int? { ids.firstIndex(of: identifier).map { ids.count - 1 - $0 } }
    }

    func testTheStateRoundTripsThroughTheArchiveAsStringArrays() throws {
        let source = Reversed(ids: ["a", "b", "c", "d"])
        let saved = ListRestorationState(selectedRows: [0, 2], visibleRows: [1, 2, 3], in: source)
        XCTAssertEqual(saved.selection, ["d", "b"])
        var restored: ListRestorationState?
        try roundTrip(encode: { c in
            try c.encode(saved, forKey: "list")
        }, decode: { c in
            restored = try c.decode(ListRestorationState.self, forKey: "list")
            try c.decodeRecord(forKey: "list") { r in
                XCTAssertEqual(try r.valueType(forKey: "selection"), .stringArray)
                XCTAssertEqual(try r.valueType(forKey: "visible"), .stringArray)
            }
        })
        XCTAssertEqual(restored, saved)
        // Rows inserted and deleted between save and restore.
        let now = ModelAssociation(identifiers: ["x", "b", "y", "c", "d"])
        XCTAssertEqual(restored?.selectedRows(in: now), [4, 1])
        XCTAssertEqual(restored?.firstVisibleRow(in: now), 3, "c was the first visible row")

        // An empty state keeps its (empty) string arrays.
        try roundTrip(encode: { try $0.encode(ListRestorationState(), forKey: "list") },
                      decode: { c in
                          XCTAssertEqual(try c.decode(ListRestorationState.self, forKey: "list"), ListRestorationState())
                          try c.decodeRecord(forKey: "list") { XCTAssertEqual(try $0.valueType(forKey: "selection"), .stringArray) }
                      })
    }
}
