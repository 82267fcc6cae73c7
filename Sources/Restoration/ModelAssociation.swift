/// Maps a list's rows to stable model identifiers and back: the role of
/// UIKit's `UIDataSourceModelAssociation`.
///
/// A restored list must not reselect "row 4": rows may have been inserted
/// or removed since the save (new data arrived, an item was deleted).
/// Save model identifiers instead, and ask the data source where they are
/// now. Conform your data source, or use ``ModelAssociation``.
///
/// See also ``ListRestorationState``, and <doc:Restoration>, the overview of
/// preservation and restoration.
public protocol ModelAssociating {
    /// The stable identifier of the model at `index`, or nil when the index
    /// is out of range (UIKit's `modelIdentifierForElement(at:in:)`).
    func modelIdentifier(forElementAt index: Int) -> String?

    /// Where the model with `identifier` is now, or nil when it is gone
    /// (UIKit's `indexPathForElement(withModelIdentifier:in:)`).
    func index(forElementWithModelIdentifier identifier: String) -> Int?
}

/// A ready-made ``ModelAssociating`` over the list's current identifiers.
///
/// ```swift
/// let association = ModelAssociation(countries, id: \.code)   // "NO", "NZ", …
/// ```
///
/// See also <doc:Restoration>.
public struct ModelAssociation: ModelAssociating, Sendable {
    /// The identifiers, in row order.
    public let identifiers: [String]
    private let rows: [String: Int]

    /// Identifiers in row order; when one repeats, its first row counts.
    public init(identifiers: [String]) {
        self.identifiers = identifiers
        var rows: [String: Int] = [:]
        rows.reserveCapacity(identifiers.count)
        for (i, id) in identifiers.enumerated() where rows[id] == nil { rows[id] = i }
        self.rows = rows
    }

    /// The identifiers of `models`, in order, taken by `id`.
    public init<C: Collection, ID: CustomStringConvertible>(_ models: C, id: (C.Element) -> ID) {
        self.init(identifiers: models.map { id($0).description })
    }

    /// The identifiers of `Identifiable` models.
    public init<C: Collection>(_ models: C) where C.Element: Identifiable, C.Element.ID: CustomStringConvertible {
        self.init(identifiers: models.map { $0.id.description })
    }

    /// The identifier at `index`, or nil out of range.
    public func modelIdentifier(forElementAt index: Int) -> String? {
        identifiers.indices.contains(index) ? identifiers[index] : nil
    }

    /// The row of `identifier`, or nil when gone.
    public func index(forElementWithModelIdentifier identifier: String) -> Int? {
        rows[identifier]
    }
}

/// A list's selection and scroll position by model identifier, so they
/// come back on the right rows after rows were inserted or removed.
///
/// Save it in ``StateRestoring/encodeRestorableState(with:)`` and map it
/// back in ``StateRestoring/decodeRestorableState(with:)`` (or in
/// ``StateRestoring/applicationFinishedRestoringState()``, once the list's
/// data is loaded):
///
/// ```swift
/// func encodeRestorableState(with coder: RestorationCoder) throws {
///     let state = ListRestorationState(selectedRows: selectedRows, visibleRows: visibleRows, in: dataSource)
///     try coder.encode(state, forKey: "list")
/// }
/// func decodeRestorableState(with coder: RestorationCoder) throws {
///     guard let state = try coder.decode(ListRestorationState.self, forKey: "list") else { return }
///     selectedRows = state.selectedRows(in: dataSource)      // rows now, in the new order
///     scroll(toRow: state.firstVisibleRow(in: dataSource))   // first saved row still present
/// }
/// ```
///
/// Stored (by ``RestorationCoder/encode(_:forKey:)-(Encodable,_)``) as a
/// record with a string array `selection` and a string array `visible`,
/// which a C host reads with `rst_decode_begin_record` and
/// `rst_decode_string_array`.
///
/// See also ``ModelAssociating``, and <doc:Restoration>.
public struct ListRestorationState: Codable, Equatable, Hashable, Sendable {
    /// The selected models, in selection order.
    public var selection: [String]
    /// The visible models, top first. Several are kept so that when the
    /// first one was deleted, the next survivor takes its place.
    public var visible: [String]

    /// A state from identifiers.
    public init(selection: [String] = [], visible: [String] = []) {
        self.selection = selection
        self.visible = visible
    }

    /// The state of a list now: its selected rows and visible rows as
    /// identifiers (rows the data source has no identifier for are left out).
    ///
    /// - Parameters:
    ///   - selectedRows: The selected rows.
    ///   - visibleRows: The visible rows, top first (a few are enough;
    ///     `firstVisibleRow` falls back along them).
    ///   - dataSource: The list's current rows.
    public init<S: Sequence, V: Sequence>(selectedRows: S, visibleRows: V, in dataSource: ModelAssociating)
    where S.Element == Int, V.Element == Int {
        self.selection = selectedRows.compactMap { dataSource.modelIdentifier(forElementAt: $0) }
        self.visible = visibleRows.compactMap { dataSource.modelIdentifier(forElementAt: $0) }
    }

    /// The first selected model, for single-selection lists.
    public var selectedIdentifier: String? { selection.first }

    /// The first visible model at save time.
    public var firstVisibleIdentifier: String? { visible.first }

    /// The rows of the saved selection in the list as it is now, in
    /// selection order; models that were removed are dropped.
    public func selectedRows(in dataSource: ModelAssociating) -> [Int] {
        selection.compactMap { dataSource.index(forElementWithModelIdentifier: $0) }
    }

    /// The row to scroll to: where the first saved visible model that
    /// still exists is now; nil when none does.
    public func firstVisibleRow(in dataSource: ModelAssociating) -> Int? {
        for id in visible {
            if let row = dataSource.index(forElementWithModelIdentifier: id) { return row }
        }
        return nil
    }
}
