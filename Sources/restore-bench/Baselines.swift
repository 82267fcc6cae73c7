// What a user would otherwise pick, each done as its users would do it.
//
// * NSKeyedArchiver / NSKeyedUnarchiver: NSSecureCoding model classes (one per
//   restoration class name), parent and cross reference as real object
//   references, requiresSecureCoding on both sides, decoding through
//   NSKeyedUnarchiver.unarchivedObject(ofClasses:from:). Two Linux
//   workarounds a careful user finds (BASELINES.md points 1 and 2):
//     - the [Int64] x4 is written as "rows.count" + "rows.0"..."rows.3" keyed
//       Int64s, not as an NSArray of NSNumber: corelibs' NSArray.hash is its
//       count, so thousands of same-length arrays make the archiver O(N^2);
//     - the 32-byte Data uses encodeBytes/withDecodedUnsafeBytes and the archive is
//       written into an NSMutableData whose bytes are memcpy'd, avoiding the
//       byte-by-byte NSData -> Data bridge.
//   `--natural-nskeyed` adds the unworked variant ([Int64] as NSArray, Data as
//   an NSData object, archivedData(withRootObject:requiringSecureCoding:)),
//   for N <= 1,000 only.
// * PropertyListEncoder (.binary) / PropertyListDecoder and JSONEncoder /
//   JSONDecoder over Codable structs; parent and reference are stored as
//   pre-order indexes and re-linked after decoding.
//
// Every "restore" ends with the host's object graph rebuilt: objects with
// their parent and reference linked, as the engine's restore does.

import Foundation

// MARK: - NSKeyedArchiver model

/// The NSSecureCoding note record {text, count}.
final class KeyedNote: NSObject, NSSecureCoding {
    static var supportsSecureCoding: Bool { true }
    var text: String
    var count: Int64
    init(text: String, count: Int64) { self.text = text; self.count = count }
    func encode(with coder: NSCoder) {
        coder.encode(text, forKey: "text")
        coder.encode(count, forKey: "count")
    }
    init?(coder: NSCoder) {
        guard let t = coder.decodeObject(of: NSString.self, forKey: "text") else { return nil }
        text = t as String
        count = coder.decodeInt64(forKey: "count")
    }
}

/// How KeyedNode writes the int array and the bytes (see the file comment).
nonisolated(unsafe) var keyedNaturalCode = false
private let rowKeys = (0..<64).map { "rows.\($0)" }

/// The NSSecureCoding model object. Each restoration class name is a subclass
/// (RowView, DetailController, ...), so the archive names the class as UIKit's
/// does and the unarchiver re-creates the right class.
class KeyedNode: NSObject, NSSecureCoding {
    class var supportsSecureCoding: Bool { true }
    var identifier = ""
    var parent: KeyedNode?
    var flag = false
    var number: Int64 = 0
    var ratio = 0.0
    var title = ""
    var blob = Data()
    var link: KeyedNode?
    var note: KeyedNote?
    var rows: [Int64] = []

    required override init() { super.init() }

    func encode(with coder: NSCoder) {
        coder.encode(identifier, forKey: "id")
        coder.encode(parent, forKey: "parent")
        coder.encode(flag, forKey: "flag")
        coder.encode(number, forKey: "number")
        coder.encode(ratio, forKey: "ratio")
        coder.encode(title, forKey: "title")
        coder.encode(link, forKey: "link")
        coder.encode(note, forKey: "note")
        if keyedNaturalCode {
            coder.encode(blob, forKey: "blob")                      // an NSData object
            coder.encode(rows, forKey: "rows")                      // an NSArray of NSNumber
        } else {
            blob.withUnsafeBytes { raw in
                coder.encodeBytes(raw.baseAddress?.assumingMemoryBound(to: UInt8.self), length: raw.count, forKey: "blob")
            }
            coder.encode(Int64(rows.count), forKey: "rows.count")
            for (k, v) in rows.enumerated() { coder.encode(v, forKey: rowKeys[k]) }
        }
    }

    required init?(coder: NSCoder) {
        guard let id = coder.decodeObject(of: NSString.self, forKey: "id"),
              let t = coder.decodeObject(of: NSString.self, forKey: "title") else { return nil }
        identifier = id as String
        parent = coder.decodeObject(of: KeyedNode.self, forKey: "parent")
        flag = coder.decodeBool(forKey: "flag")
        number = coder.decodeInt64(forKey: "number")
        ratio = coder.decodeDouble(forKey: "ratio")
        title = t as String
        link = coder.decodeObject(of: KeyedNode.self, forKey: "link")
        note = coder.decodeObject(of: KeyedNote.self, forKey: "note")
        if keyedNaturalCode {
            if let d = coder.decodeObject(of: NSData.self, forKey: "blob") { blob = d as Data }
            if let a = coder.decodeObject(of: [NSArray.self, NSNumber.self], forKey: "rows") as? [NSNumber] {
                rows = a.map { $0.int64Value }
            }
        } else {
            blob = coder.withDecodedUnsafeBytes(forKey: "blob") { raw in
                guard let raw, let base = raw.baseAddress else { return Data() }
                return Data(bytes: base, count: raw.count)
            }
            let n = Int(coder.decodeInt64(forKey: "rows.count"))
            guard n >= 0 && n <= rowKeys.count else { return nil }
            rows = (0..<n).map { coder.decodeInt64(forKey: rowKeys[$0]) }
        }
        super.init()
    }

    class var classIndex: Int { -1 }
}

// One subclass per name in Graph.classNames, in the same order. Their archived
// names are module-qualified ("restore_bench.RowView", BASELINES.md point 8).
final class AppRootController: KeyedNode { override class var classIndex: Int { 0 } }
final class TabBarController: KeyedNode { override class var classIndex: Int { 1 } }
final class NavigationController: KeyedNode { override class var classIndex: Int { 2 } }
final class SplitController: KeyedNode { override class var classIndex: Int { 3 } }
final class ListController: KeyedNode { override class var classIndex: Int { 4 } }
final class DetailController: KeyedNode { override class var classIndex: Int { 5 } }
final class SectionView: KeyedNode { override class var classIndex: Int { 6 } }
final class RowView: KeyedNode { override class var classIndex: Int { 7 } }
final class CellView: KeyedNode { override class var classIndex: Int { 8 } }
final class HeaderView: KeyedNode { override class var classIndex: Int { 9 } }
final class FooterView: KeyedNode { override class var classIndex: Int { 10 } }
final class ToolbarView: KeyedNode { override class var classIndex: Int { 11 } }
final class SearchController: KeyedNode { override class var classIndex: Int { 12 } }
final class FilterPanel: KeyedNode { override class var classIndex: Int { 13 } }
final class EditorController: KeyedNode { override class var classIndex: Int { 14 } }
final class PreviewPane: KeyedNode { override class var classIndex: Int { 15 } }
final class InspectorPane: KeyedNode { override class var classIndex: Int { 16 } }
final class SettingsController: KeyedNode { override class var classIndex: Int { 17 } }
final class MediaView: KeyedNode { override class var classIndex: Int { 18 } }
final class MapPane: KeyedNode { override class var classIndex: Int { 19 } }

let keyedClasses: [KeyedNode.Type] = [
    AppRootController.self, TabBarController.self, NavigationController.self, SplitController.self,
    ListController.self, DetailController.self, SectionView.self, RowView.self,
    CellView.self, HeaderView.self, FooterView.self, ToolbarView.self,
    SearchController.self, FilterPanel.self, EditorController.self, PreviewPane.self,
    InspectorPane.self, SettingsController.self, MediaView.self, MapPane.self,
]

/// NSKeyedArchiver with secure coding; `natural` selects the unworked code.
final class KeyedArchiverContestant: Contestant {
    let natural: Bool
    let graph: Graph
    private var nodes: [KeyedNode] = []
    private var archive = Data()
    private var restored: [KeyedNode] = []

    var key: String { natural ? "nskeyed-natural" : "nskeyed" }
    var name: String { natural ? "NSKeyedArchiver (natural code)" : "NSKeyedArchiver" }

    init(graph: Graph, natural: Bool) {
        self.graph = graph
        self.natural = natural
        for (i, c) in keyedClasses.enumerated() {
            precondition(c.classIndex == i && NSStringFromClass(c).hasSuffix("." + Graph.classNames[i]),
                         "keyedClasses out of step with Graph.classNames")
        }
        nodes.reserveCapacity(graph.count)
        for o in graph.objects {
            let n = keyedClasses[o.classIndex].init()
            n.identifier = o.identifier
            n.parent = o.parent < 0 ? nil : nodes[o.parent]
            n.flag = o.flag; n.number = o.number; n.ratio = o.ratio; n.title = o.title; n.blob = o.blob
            n.link = o.ref < 0 ? nil : nodes[o.ref]
            n.note = KeyedNote(text: o.noteText, count: o.noteCount)
            n.rows = o.rows
            nodes.append(n)
        }
    }

    func save() throws -> Int {
        keyedNaturalCode = natural
        let root = NSArray(array: nodes)
        if natural {
            archive = try NSKeyedArchiver.archivedData(withRootObject: root, requiringSecureCoding: true)
        } else {
            let out = NSMutableData()
            let archiver = NSKeyedArchiver(forWritingWith: out)
            archiver.requiresSecureCoding = true
            archiver.encode(root, forKey: NSKeyedArchiveRootObjectKey)
            archiver.finishEncoding()
            if let error = archiver.error { throw error }
            archive = Data(bytes: out.bytes, count: out.length)   // memcpy, not the NSData bridge
        }
        return archive.count
    }

    func restore() throws {
        keyedNaturalCode = natural
        let classes: [AnyClass] = [NSArray.self, KeyedNode.self, KeyedNote.self]
        guard let array = try NSKeyedUnarchiver.unarchivedObject(ofClasses: classes, from: archive) as? NSArray else {
            throw BenchError("NSKeyedUnarchiver returned no array")
        }
        var result: [KeyedNode] = []
        result.reserveCapacity(array.count)
        for case let n as KeyedNode in array { result.append(n) }
        restored = result
    }

    func verifyRestore() -> String? {
        guard restored.count == graph.count else { return "restored \(restored.count) objects, expected \(graph.count)" }
        var index: [ObjectIdentifier: Int] = [:]
        index.reserveCapacity(restored.count)
        for (i, n) in restored.enumerated() { index[ObjectIdentifier(n)] = i }
        for (i, o) in graph.objects.enumerated() {
            let n = restored[i]
            if type(of: n).classIndex != o.classIndex { return "object \(i): class \(type(of: n))" }
            if n.identifier != o.identifier || n.flag != o.flag || n.number != o.number
                || n.ratio.bitPattern != o.ratio.bitPattern || n.title != o.title || n.blob != o.blob
                || n.note?.text != o.noteText || n.note?.count != o.noteCount || n.rows != o.rows {
                return "object \(i): values differ"
            }
            let p = n.parent.flatMap { index[ObjectIdentifier($0)] } ?? -1
            let r = n.link.flatMap { index[ObjectIdentifier($0)] } ?? -1
            if p != o.parent { return "object \(i): parent \(p) != \(o.parent)" }
            if r != o.ref { return "object \(i): reference \(r) != \(o.ref)" }
        }
        return nil
    }

    func endRestore() { restored = [] }
}

// MARK: - Codable (PropertyListEncoder, JSONEncoder)

struct CodableNote: Codable {
    var text: String
    var count: Int64
}

/// One object as a Codable user writes it: links become pre-order indexes.
struct CodableObject: Codable {
    var id: String
    var className: String
    var parent: Int?
    var flag: Bool
    var number: Int64
    var ratio: Double
    var title: String
    var blob: Data
    var link: Int?
    var note: CodableNote
    var rows: [Int64]
}

struct CodableArchive: Codable {
    var version: Int
    var objects: [CodableObject]
}

/// PropertyListEncoder(.binary) or JSONEncoder over CodableArchive. Save
/// converts the host's live objects to structs (links to indexes) and
/// encodes; restore decodes and rebuilds the objects with their links.
final class CodableContestant: Contestant {
    enum Kind { case binaryPlist, json }
    let kind: Kind
    let graph: Graph
    private let live: [Node]
    private var archive = Data()
    private var restored: [Node] = []

    var key: String { kind == .json ? "json" : "plist" }
    var name: String { kind == .json ? "JSONEncoder" : "PropertyListEncoder (binary)" }

    init(graph: Graph, live: [Node], kind: Kind) {
        self.graph = graph
        self.live = live
        self.kind = kind
    }

    func save() throws -> Int {
        var objects: [CodableObject] = []
        objects.reserveCapacity(live.count)
        for n in live {
            objects.append(CodableObject(
                id: n.identifier, className: n.className, parent: n.parent?.index,
                flag: n.flag, number: n.number, ratio: n.ratio, title: n.title, blob: n.blob,
                link: n.ref?.index, note: CodableNote(text: n.noteText, count: n.noteCount), rows: n.rows))
        }
        let value = CodableArchive(version: 1, objects: objects)
        switch kind {
        case .binaryPlist:
            let encoder = PropertyListEncoder()
            encoder.outputFormat = .binary
            archive = try encoder.encode(value)
        case .json:
            archive = try JSONEncoder().encode(value)
        }
        return archive.count
    }

    func restore() throws {
        let value: CodableArchive
        switch kind {
        case .binaryPlist: value = try PropertyListDecoder().decode(CodableArchive.self, from: archive)
        case .json: value = try JSONDecoder().decode(CodableArchive.self, from: archive)
        }
        var nodes: [Node] = []
        nodes.reserveCapacity(value.objects.count)
        for (i, o) in value.objects.enumerated() {
            var parent: Node?
            if let p = o.parent {
                guard p >= 0 && p < i else { throw BenchError("object \(i): bad parent index \(p)") }
                parent = nodes[p]
            }
            let n = Node(identifier: o.id, className: o.className, parent: parent, index: i)
            n.flag = o.flag; n.number = o.number; n.ratio = o.ratio; n.title = o.title; n.blob = o.blob
            n.noteText = o.note.text; n.noteCount = o.note.count; n.rows = o.rows
            nodes.append(n)
        }
        // References may point anywhere in the array: link after all exist.
        for (i, o) in value.objects.enumerated() {
            if let r = o.link {
                guard r >= 0 && r < nodes.count else { throw BenchError("object \(i): bad reference index \(r)") }
                nodes[i].ref = nodes[r]
            }
        }
        restored = nodes
    }

    func verifyRestore() -> String? { graph.verify(restored: restored) }
    func endRestore() { restored = [] }
}
