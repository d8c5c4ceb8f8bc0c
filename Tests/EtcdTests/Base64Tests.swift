import Testing

@testable import Etcd

@Suite struct Base64Tests {
  @Test func roundTripsEveryLengthAndByte() {
    for length in 0..<40 {
      let bytes = (0..<length).map { UInt8(($0 * 97 + length * 31) & 0xFF) }
      #expect(Base64.decode(Base64.encode(bytes)) == bytes)
    }
    let all = (0...255).map(UInt8.init)
    #expect(Base64.decode(Base64.encode(all)) == all)
  }

  @Test func matchesRFC4648() {
    let vectors = [
      "": "", "f": "Zg==", "fo": "Zm8=", "foo": "Zm9v", "foob": "Zm9vYg==", "fooba": "Zm9vYmE=",
      "foobar": "Zm9vYmFy",
    ]
    for (plain, encoded) in vectors {
      #expect(Base64.encode(Array(plain.utf8)) == encoded)
      #expect(Base64.decode(encoded) == Array(plain.utf8))
    }
  }

  /// A request's body is written by appending: after what is there, from any collection (a
  /// slice, or one with no contiguous storage).
  @Test func appendsAfterWhatIsThere() {
    for (plain, encoded) in ["f": "Zg==", "fo": "Zm8=", "foo": "Zm9v", "foobar": "Zm9vYmFy"] {
      var output = Array("{".utf8)
      Base64.encode(Array(plain.utf8).lazy.map { $0 }, into: &output)
      Base64.encode(Array(("x" + plain).utf8).dropFirst(), into: &output)
      #expect(String(decoding: output, as: UTF8.self) == "{" + encoded + encoded)
    }
  }

  @Test func refusesWhatIsNotBase64() {
    for text in ["Zg=", "Zg=a", "Z===", "Zm9v!A==", "=Zm9", "Zg==Zg=="] {
      #expect(Base64.decode(text) == nil, "\(text)")
    }
  }

  @Test func prefixEndIncrementsTheLastByteBelowFF() {
    #expect(RangeRequest.prefixEnd(Array("/a/".utf8)) == Array("/a0".utf8))
    #expect(RangeRequest.prefixEnd([0x61, 0xFF, 0xFF]) == [0x62])
    #expect(RangeRequest.prefixEnd([0xFF]) == [0])
  }
}
