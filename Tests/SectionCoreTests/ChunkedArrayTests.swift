import Testing

@testable import SectionCore

@Suite struct ChunkedArrayTests {
  /// SplitMix64: the same sequence every run, so a failure repeats.
  struct Random {
    var state: UInt64
    mutating func next(below bound: Int) -> Int {
      state &+= 0x9E37_79B9_7F4A_7C15
      var z = state
      z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
      z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
      return Int((z ^ (z >> 31)) % UInt64(bound))
    }
  }

  /// Inserts, removes and writes at random positions, against an array doing the same: the
  /// list grows past several chunk splits, shrinks through merges to nothing, and grows again.
  @Test func behavesAsAnArray() {
    var random = Random(state: 11)
    var chunked = ChunkedArray<Int>()
    var array: [Int] = []
    let limit = ChunkedArray<Int>.chunkLimit
    for round in 0..<3 {
      let target = round == 1 ? 0 : limit * 6
      for step in 0..<(limit * 40) {
        let grow = array.count < target ? random.next(below: 10) < 7 : random.next(below: 10) < 3
        if grow || array.isEmpty {
          let position = random.next(below: array.count + 1)
          chunked.insert(step, at: position)
          array.insert(step, at: position)
        } else if random.next(below: 4) == 0 {
          let position = random.next(below: array.count)
          chunked[position] += 1
          array[position] += 1
        } else {
          let position = random.next(below: array.count)
          #expect(chunked.remove(at: position) == array.remove(at: position))
        }
        if step % 97 == 0 {
          #expect(chunked.count == array.count)
          #expect(Array(chunked) == array)
        }
      }
      #expect(Array(chunked) == array)
      #expect(chunked.indices.map { chunked[$0] } == array)
      if let probe = array.last { #expect(chunked.firstIndex { $0 == probe } == array.firstIndex(of: probe)) }
      #expect(chunked.positions { $0 % 3 == 0 } == array.indices.filter { array[$0] % 3 == 0 })
    }
  }

  @Test func equalityIgnoresChunking() {
    var grown = ChunkedArray<Int>()
    for value in (0..<1_000).reversed() { grown.insert(value, at: 0) }
    let built = ChunkedArray(0..<1_000)
    #expect(grown == built)
    grown[999] = 0
    #expect(grown != built)
    #expect(ChunkedArray<Int>() == [])
  }

  /// A copy is independent, as an array's is.
  @Test func copiesOnWrite() {
    let original: ChunkedArray = [1, 2, 3]
    var copy = original
    copy.insert(0, at: 0)
    copy[3] = 9
    #expect(Array(original) == [1, 2, 3])
    #expect(Array(copy) == [0, 1, 2, 9])
  }
}
