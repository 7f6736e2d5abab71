import Foundation
import ReferenceRenders
import Testing

@testable import Timeline

/// ``ClipList`` against a plain array of clips: every operation on lists of every size and
/// chunk layout, over every range worth telling apart, must leave the same clips in the same
/// order, a sound structure, and every copy taken before it unchanged.
@Suite("ClipList: a persistent list compared with an array")
struct ClipListTests {
  /// Clip `id` at `start` (ids and starts chosen by the tests, never by the list).
  static func clip(_ id: Int64, start: Int64) -> Clip {
    Clip(
      id: Clip.ID(id), source: Source.ID(1), timelineStart: FramePosition(start),
      sourceRange: FrameRange(start: .zero, count: 100))
  }

  /// `count` clips in timeline order, ids 1…count, starts 10 apart.
  static func model(_ count: Int, idBase: Int64 = 0) -> [Clip] {
    (0..<count).map { clip(idBase + Int64($0) + 1, start: Int64($0) * 10) }
  }

  /// The same clips in the chunk layouts different histories give: built at once, appended one
  /// by one, inserted at the front one by one, inserted in the middle, and left by removals of
  /// a longer list.
  static func layouts(of clips: [Clip]) -> [(String, ClipList)] {
    var appended = ClipList()
    for clip in clips { appended.append(clip) }
    var prepended = ClipList()
    for clip in clips.reversed() { prepended.insert(clip, at: 0) }
    var middle = ClipList()
    for clip in clips { middle.insertInOrder(clip) }
    var thinned = ClipList()
    for (index, clip) in clips.enumerated() {
      thinned.append(clip)
      thinned.append(Self.clip(1_000_000 + Int64(index), start: clip.timelineStart.frames))
    }
    thinned.removeAll { $0.id.rawValue >= 1_000_000 }
    return [
      ("built", ClipList(clips)), ("appended", appended), ("prepended", prepended),
      ("inserted in order", middle), ("thinned", thinned),
    ]
  }

  /// Sizes around a built chunk and a chunk's capacity, and past them.
  static let sizes = [
    0, 1, 2, ClipList.chunkSize - 1, ClipList.chunkSize, ClipList.chunkSize + 1,
    ClipList.chunkCapacity, ClipList.chunkCapacity + 1, 128, 129, 200,
  ]

  /// Positions worth telling apart in a list of `count`: the ends, chunk edges and the middle.
  static func positions(_ count: Int) -> [Int] {
    let chunk = ClipList.chunkSize
    return Set([0, 1, count / 2, count - 1, count, chunk - 1, chunk, chunk + 1, 2 * chunk, 128])
      .filter { $0 >= 0 && $0 <= count }.sorted()
  }

  func expectSame(
    _ list: ClipList, _ model: [Clip], _ what: String,
    sourceLocation: SourceLocation = #_sourceLocation
  ) {
    #expect(Array(list) == model, "\(what): the clips", sourceLocation: sourceLocation)
    #expect(list.count == model.count, "\(what): count", sourceLocation: sourceLocation)
    #expect(list.isEmpty == model.isEmpty, "\(what): isEmpty", sourceLocation: sourceLocation)
    #expect(list.structureProblem() == nil, "\(what)", sourceLocation: sourceLocation)
    for index in model.indices where list[index] != model[index] {
      Issue.record("\(what): subscript \(index)", sourceLocation: sourceLocation)
      return
    }
    for (index, clip) in model.enumerated() where list.index(of: clip.id) != index {
      Issue.record("\(what): index(of: \(clip.id))", sourceLocation: sourceLocation)
      return
    }
    if model.indices.dropFirst().allSatisfy({ !Clip.timelineOrder(model[$0], model[$0 - 1]) }) {
      for clip in model where list.clip(clip.id, at: clip.timelineStart) != clip {
        Issue.record("\(what): clip(\(clip.id), at:)", sourceLocation: sourceLocation)
        return
      }
    }
    #expect(list == ClipList(model), "\(what): ==", sourceLocation: sourceLocation)
    #expect(list.hashValue == ClipList(model).hashValue, sourceLocation: sourceLocation)
  }

  @Test func layoutsHoldTheirClips() {
    for size in Self.sizes {
      let model = Self.model(size)
      for (name, list) in Self.layouts(of: model) {
        expectSame(list, model, "\(name) \(size)")
        #expect(list.isSorted)
        #expect(!list.contains(id: Clip.ID(999_999)))
        #expect(list.clip(Clip.ID(999_999)) == nil)
        #expect(list.index(of: Clip.ID(999_999)) == nil)
      }
    }
  }

  @Test func replaceSubrangeEveryRange() {
    for size in Self.sizes {
      let model = Self.model(size)
      let positions = Self.positions(size)
      for (name, list) in Self.layouts(of: model) {
        for lower in positions {
          for upper in positions where upper >= lower {
            for inserted in [0, 150] {
              let new = Self.model(inserted, idBase: 500_000)
              var expected = model
              expected.replaceSubrange(lower..<upper, with: new)
              var edited = list
              edited.replaceSubrange(lower..<upper, with: new)
              expectSame(edited, expected, "\(name) \(size) [\(lower)..<\(upper)] + \(inserted)")
              #expect(Array(list) == model, "the copy of \(name) \(size)")
            }
          }
        }
      }
    }
  }

  @Test func singleElementEditsAtEveryPosition() {
    for size in Self.sizes {
      let model = Self.model(size)
      for (name, list) in Self.layouts(of: model) {
        for position in Self.positions(size) {
          let clip = Self.clip(700_000, start: 5)
          var expected = model
          expected.insert(clip, at: position)
          var edited = list
          edited.insert(clip, at: position)
          expectSame(edited, expected, "\(name) \(size) insert at \(position)")
          guard position < size else { continue }
          expected = model
          let removed = expected.remove(at: position)
          edited = list
          #expect(edited.remove(at: position) == removed)
          expectSame(edited, expected, "\(name) \(size) remove at \(position)")
          expected = model
          expected[position].gain = Gain(decibels: -6)
          expected[position].timelineStart = FramePosition(3)
          edited = list
          edited[position].gain = Gain(decibels: -6)
          edited[position].timelineStart = FramePosition(3)
          expectSame(edited, expected, "\(name) \(size) set at \(position)")
          expectSame(list, model, "the copy of \(name) \(size)")
        }
      }
    }
  }

  @Test func inOrderEditsByID() {
    for size in Self.sizes {
      let model = Self.model(size)
      for (name, list) in Self.layouts(of: model) {
        for position in Self.positions(size) where position < size {
          let id = model[position].id
          // Moved later in time: out at its place, in at its new one.
          var moved = model[position]
          moved.timelineStart = FramePosition(Int64(size) * 5 + 1)
          var expected = model
          expected.remove(at: position)
          expected.append(moved)
          expected.sort(by: Clip.timelineOrder)
          var edited = list
          #expect(edited.remove(id: id) == model[position])
          edited.insertInOrder(moved)
          expectSame(edited, expected, "\(name) \(size) move \(id)")
          #expect(edited.clip(id) == moved)
          #expect(edited.isSorted)
        }
        // Many at once: every third removed, then put back in order.
        let third = model.enumerated().filter { $0.offset % 3 == 0 }.map(\.element)
        var edited = list
        edited.remove(ids: third.map(\.id))
        expectSame(
          edited, model.enumerated().filter { $0.offset % 3 != 0 }.map(\.element),
          "\(name) \(size) thirds out")
        edited.insertInOrder(third)
        expectSame(edited, model, "\(name) \(size) thirds back")
        expectSame(list, model, "the copy of \(name) \(size)")
      }
    }
  }

  /// A batch (``ClipList/replace(removing:inserting:)``) against the same changes made one by
  /// one and against a sorted array: random removals (some of ids the list does not hold),
  /// clips put back where they were with a new gain, moved, and new ones, on every size and
  /// layout; then the edges: whole chunks emptied, hundreds of clips into one chunk, every clip
  /// out, an empty list filled, an id given twice.
  @Test(arguments: [UInt64(1), 2, 3])
  func batchesEqualOneByOne(seed: UInt64) {
    var rng = SeededGenerator(seed: seed)
    for size in Self.sizes + [1_000] {
      let model = Self.model(size)
      for (name, list) in Self.layouts(of: model) {
        for round in 0..<4 {
          var removed: [Clip.ID] = []
          var incoming: [Clip] = []
          for clip in model where Int.random(in: 0..<5, using: &rng) == 0 {
            removed.append(clip.id)
            switch Int.random(in: 0..<3, using: &rng) {
            case 0:
              var same = clip
              same.gain = Gain(decibels: -Double(round + 1))
              incoming.append(same)
            case 1:
              var moved = clip
              moved.timelineStart = FramePosition(
                Int64.random(in: 0...(Int64(size) * 10 + 20), using: &rng))
              incoming.append(moved)
            default:
              break
            }
          }
          removed += (0..<3).map { _ in Clip.ID(Int64.random(in: 900_000...900_100, using: &rng)) }
          for index in 0..<Int.random(in: 0...(round == 3 ? 300 : 20), using: &rng) {
            incoming.append(
              Self.clip(
                600_000 + Int64(index),
                start: Int64.random(in: 0...(Int64(size) * 10 + 20), using: &rng)))
          }
          expectBatch(
            list, removing: removed.shuffled(using: &rng),
            inserting: incoming.shuffled(using: &rng), "\(name) \(size) round \(round)")
        }
      }
    }
    // Edges: chunks emptied whole (the second and third of a built list), hundreds of clips
    // into one chunk, everything out, everything in, and clips in and out at chunk edges.
    let model = Self.model(1_000)
    let built = ClipList(model)
    let chunk = ClipList.chunkSize
    expectBatch(
      built, removing: model[chunk..<3 * chunk].map(\.id), inserting: [], "two chunks out")
    expectBatch(
      built, removing: [],
      inserting: (0..<400).map { Self.clip(700_000 + Int64($0), start: 5_005) },
      "400 into one chunk")
    expectBatch(built, removing: model.map(\.id), inserting: [], "every clip out")
    expectBatch(ClipList(), removing: [], inserting: model.reversed(), "an empty list filled")
    expectBatch(
      built, removing: model.map(\.id),
      inserting: model.map { clip in
        var moved = clip
        moved.timelineStart = FramePosition(20_000 - clip.timelineStart.frames)
        return moved
      }, "every clip moved")
    let edges = [0, chunk - 1, chunk, 2 * chunk - 1, 2 * chunk, 999].map { model[$0] }
    expectBatch(
      built, removing: edges.map(\.id),
      inserting: edges.map { clip in
        var moved = clip
        moved.timelineStart = FramePosition(clip.timelineStart.frames + 5)
        return moved
      }, "chunk edges moved")
    var louder = model[70]
    louder.gain = Gain(decibels: -4)
    expectBatch(built, removing: [louder.id], inserting: [louder], "one clip changed in place")
    // Written over in place: every fifth clip with a new gain, in any order, across chunks;
    // then one clip put back twice (an id the list would then hold twice).
    let quieter = model.enumerated().filter { $0.offset % 5 == 0 }.map { _, clip in
      var quieter = clip
      quieter.gain = Gain(decibels: -5)
      return quieter
    }
    expectBatch(
      built, removing: quieter.map(\.id).reversed(), inserting: quieter.shuffled(using: &rng),
      "a fifth of the clips changed in place")
    expectBatch(
      built, removing: [louder.id, louder.id], inserting: [louder, louder],
      "one clip put back twice")
    // Written over in place by the caller's word: the same list as the batch, or (a clip
    // moved, a clip new, an id held twice) false and nothing changed.
    var inPlace = built
    let written = inPlace.replaceInPlace(quieter.shuffled(using: &rng))
    #expect(written)
    var batched = built
    batched.replace(removing: quieter.map(\.id), inserting: quieter)
    expectSame(inPlace, Array(batched), "in place")
    var moved = quieter[3]
    moved.timelineStart = FramePosition(moved.timelineStart.frames + 1)
    for refused in [
      quieter.prefix(5) + [moved], quieter.prefix(5) + [Self.clip(800_000, start: 7)],
    ] {
      var untouched = built
      let refusedWritten = untouched.replaceInPlace(Array(refused))
      #expect(!refusedWritten)
      expectSame(untouched, model, "refused in place")
    }
    var repeated = built
    repeated.append(Self.clip(7, start: 20_000))
    let before = Array(repeated)
    let repeatedWritten = repeated.replaceInPlace([louder])
    #expect(!repeatedWritten)
    #expect(Array(repeated) == before)
    var twice = built
    twice.append(Self.clip(7, start: 20_000))
    expectBatch(twice, removing: [Clip.ID(7), Clip.ID(8)], inserting: [], "an id held twice")
    expectBatch(
      built, removing: [],
      inserting: [Self.clip(7, start: 20_000), Self.clip(900_001, start: 3)], "an id given twice")
  }

  /// Checks one batch against the same changes made one by one and against a sorted array.
  func expectBatch(
    _ list: ClipList, removing ids: [Clip.ID], inserting clips: [Clip], _ what: String,
    sourceLocation: SourceLocation = #_sourceLocation
  ) {
    var oneByOne = list
    oneByOne.remove(ids: ids)
    oneByOne.insertInOrder(clips)
    let gone = Set(ids)
    var expected = Array(list).filter { !gone.contains($0.id) }
    for clip in clips {
      let index = expected.firstIndex { !Clip.timelineOrder($0, clip) } ?? expected.count
      expected.insert(clip, at: index)
    }
    #expect(Array(oneByOne) == expected, "\(what): one by one", sourceLocation: sourceLocation)
    var batch = list
    batch.replace(removing: ids, inserting: clips)
    if Set(expected.map(\.id)).count == expected.count {
      expectSame(batch, expected, what, sourceLocation: sourceLocation)
    } else {
      // An id held twice is found by a scan: only the clips and the structure are compared.
      #expect(Array(batch) == expected, "\(what)", sourceLocation: sourceLocation)
      #expect(batch.structureProblem() == nil, "\(what)", sourceLocation: sourceLocation)
    }
    for id in Set(expected.map(\.id)) where batch.count(of: id) != oneByOne.count(of: id) {
      Issue.record("\(what): count of \(id)", sourceLocation: sourceLocation)
    }
    #expect(batch.isSorted, "\(what)", sourceLocation: sourceLocation)
    // By place: each clip to remove by its start as the list holds it (an id the list does
    // not hold has none), then with one start wrong, which the list must notice.
    var starts: [Clip.ID: FramePosition] = [:]
    for clip in list where starts[clip.id] == nil { starts[clip.id] = clip.timelineStart }
    let keys = ids.compactMap { id in starts[id].map { (start: $0, id: id) } }
    var keyed = list
    keyed.replace(removingAt: keys, inserting: clips)
    #expect(Array(keyed) == expected, "\(what): by place", sourceLocation: sourceLocation)
    #expect(keyed.structureProblem() == nil, "\(what)", sourceLocation: sourceLocation)
    if let first = keys.first {
      var wrong = list
      wrong.replace(
        removingAt: [(FramePosition(first.start.frames + 1), first.id)] + keys.dropFirst(),
        inserting: clips)
      #expect(Array(wrong) == expected, "\(what): a wrong place", sourceLocation: sourceLocation)
      #expect(wrong.structureProblem() == nil, "\(what)", sourceLocation: sourceLocation)
    }
  }

  /// Written over in place at positions the caller found by walking the list: the same list
  /// as the batch; or, for positions out of order or out of the list, or a clip that is not
  /// the one at its position (another id, or its own moved), false and nothing changed.
  @Test(arguments: [UInt64(1), 2])
  func replaceInPlaceAtKnownPositions(seed: UInt64) {
    var rng = SeededGenerator(seed: seed)
    let model = Self.model(700)
    for (layout, list) in Self.layouts(of: model) {
      let positions = model.indices.filter { _ in Int.random(in: 0..<3, using: &rng) == 0 }
      let louder = positions.map { position in
        var clip = model[position]
        clip.gain = Gain(decibels: -Double(position % 7) - 1)
        return clip
      }
      var expected = model
      for (position, clip) in zip(positions, louder) { expected[position] = clip }
      var written = list
      let wrote = written.replaceInPlace(at: positions, with: louder)
      #expect(wrote, "\(layout)")
      expectSame(written, expected, "\(layout): at positions")
      expectSame(list, model, "\(layout): the copy taken before")
      var moved = louder[4]
      moved.timelineStart = FramePosition(moved.timelineStart.frames + 1)
      var other = louder
      other[4] = model[positions[4] + 1]
      for (what, refusedPositions, refusedClips) in [
        ("out of order", [positions[1], positions[0]], [louder[1], louder[0]]),
        ("a position twice", [positions[0], positions[0]], [louder[0], louder[0]]),
        ("past the end", [positions[0], model.count], [louder[0], louder[1]]),
        ("before the start", [-1], [louder[0]]),
        ("another clip", positions, other),
        ("a moved clip", Array(positions.prefix(5)), Array(louder.prefix(4)) + [moved]),
        ("fewer clips than positions", positions, Array(louder.dropLast())),
      ] {
        var untouched = list
        let wrote = untouched.replaceInPlace(at: refusedPositions, with: refusedClips)
        #expect(!wrote, "\(layout): \(what)")
        expectSame(untouched, model, "\(layout): \(what) refused")
      }
    }
  }

  /// A clip given at an earlier start than its own, with no clip between the two starts, was
  /// written over its old self by ``ClipList/replaceInPlace(_:)`` (found by id alone), leaving
  /// the list's map with its old start. It is refused: it moved.
  @Test func aClipMovedEarlierIsNotWrittenInPlace() {
    let model = [Self.clip(1, start: 0), Self.clip(2, start: 100), Self.clip(3, start: 200)]
    var list = ClipList(model)
    var moved = model[1]
    moved.timelineStart = FramePosition(50)
    let wrote = list.replaceInPlace([moved])
    #expect(!wrote)
    expectSame(list, model, "refused")
    let wroteAtPosition = list.replaceInPlace(at: [1], with: [moved])
    #expect(!wroteAtPosition)
    expectSame(list, model, "refused at its position")
  }

  @Test func anIDTwiceIsStillFound() {
    var list = ClipList(Self.model(200))
    list.append(Self.clip(5, start: 10_000))
    #expect(list.count(of: Clip.ID(5)) == 2)
    #expect(list.index(of: Clip.ID(5)) == 4)
    list.remove(at: 4)
    #expect(list.count(of: Clip.ID(5)) == 1)
    #expect(list.index(of: Clip.ID(5)) == 199)
    #expect(list.structureProblem() == nil)
    list.remove(id: Clip.ID(5))
    #expect(!list.contains(id: Clip.ID(5)))
    #expect(list.structureProblem() == nil)
  }

  @Test func unsortedListsAreFoundByScanning() {
    let model = Self.model(300).reversed().map { $0 }
    let list = ClipList(model)
    #expect(!list.isSorted)
    for (index, clip) in model.enumerated() { #expect(list.index(of: clip.id) == index) }
    var sorted = list
    sorted.sort(by: Clip.timelineOrder)
    expectSame(sorted, Self.model(300), "sorted")
  }

  @Test func codableAsAnArray() throws {
    let model = Self.model(150)
    let encoder = JSONEncoder()
    encoder.outputFormatting = .sortedKeys
    let list = try encoder.encode(ClipList(model))
    #expect(list == (try encoder.encode(model)))
    #expect(try JSONDecoder().decode(ClipList.self, from: list) == ClipList(model))
  }
}
