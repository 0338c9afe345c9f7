// Valid UTF-8 by construction (assembly/utf8.ts): invalid input decodes to
// U+FFFD per maximal invalid subpart; lone surrogates encode as U+FFFD.
import { decodeUtf8Bytes, encodeUtf8, isValidUtf8 } from "../../assembly/utf8";
import { ProtoWriter } from "../../assembly/proto/writer";

function bytesOf(hex: string): Uint8Array {
  const out = new Uint8Array(hex.length / 2);
  for (let i = 0; i < out.length; i++) out[i] = <u8>I32.parseInt(hex.substr(i * 2, 2), 16);
  return out;
}

function valid(b: Uint8Array): bool {
  return isValidUtf8(b.dataStart, <usize>b.length);
}

class Row {
  constructor(
    public hex: string,
    public text: string,
  ) {}
}

describe("decodeUtf8", () => {
  it("table: valid input unchanged, invalid subparts replaced by U+FFFD", () => {
    const rows: Row[] = [
      new Row("", ""),
      new Row("616263", "abc"),
      new Row("c3a9", "\u00e9"),
      new Row("e282ac", "\u20ac"),
      new Row("f09f9880", "\uD83D\uDE00"),
      new Row("61edbfbf62", "a\uFFFD\uFFFD\uFFFDb"), // a surrogate's WTF-8: ED is invalid before BF, then two stray BF
      new Row("eda080", "\uFFFD\uFFFD\uFFFD"),
      new Row("ff", "\uFFFD"),
      new Row("c080", "\uFFFD\uFFFD"), // overlong NUL
      new Row("e282", "\uFFFD"), // truncated: one subpart
      new Row("f4908080", "\uFFFD\uFFFD\uFFFD\uFFFD"), // above U+10FFFF
      new Row("e2826161", "\uFFFDaa"),
    ];
    for (let i = 0; i < rows.length; i++) {
      const b = bytesOf(rows[i].hex);
      expect(decodeUtf8Bytes(b)).toBe(rows[i].text, rows[i].hex);
      expect(valid(b)).toBe(rows[i].text.indexOf("\uFFFD") < 0, rows[i].hex);
      // Whatever came in, what goes out is valid UTF-8.
      expect(valid(Uint8Array.wrap(encodeUtf8(decodeUtf8Bytes(b))))).toBe(true, rows[i].hex);
    }
  });
});

describe("encodeUtf8", () => {
  it("writes a lone surrogate as U+FFFD, a pair as one code point", () => {
    const lone = "a" + String.fromCharCode(0xdfff) + "b";
    expect(Uint8Array.wrap(encodeUtf8(lone))).toStrictEqual(bytesOf("61efbfbd62"));
    const pair = String.fromCharCode(0xd83d, 0xde00);
    expect(Uint8Array.wrap(encodeUtf8(pair))).toStrictEqual(bytesOf("f09f9880"));
    const high = String.fromCharCode(0xd800);
    expect(Uint8Array.wrap(encodeUtf8(high))).toStrictEqual(bytesOf("efbfbd"));
  });

  it("the protobuf writer never puts invalid UTF-8 in a string field", () => {
    const w = new ProtoWriter();
    w.stringField(1, "x" + String.fromCharCode(0xdc00) + String.fromCharCode(0xd800));
    const out = w.finish();
    expect(out).toStrictEqual(bytesOf("0a0778efbfbdefbfbd"));
  });
});

describe("decodeUtf8 on ASCII", () => {
  it("decodes every length around the eight-byte and four-byte steps, and a non-ASCII byte after them", () => {
    const alphabet = "abcdefghijklmnopqrstuvwxyz0123456789-._~!$&'()*+,;=:@/?";
    for (let n = 0; n <= alphabet.length; n++) {
      const text = alphabet.substring(0, n);
      expect(decodeUtf8Bytes(Uint8Array.wrap(String.UTF8.encode(text)))).toBe(text);
      const accented = text + "\u00e9" + text;
      expect(decodeUtf8Bytes(Uint8Array.wrap(String.UTF8.encode(accented)))).toBe(accented);
    }
    expect(decodeUtf8Bytes(bytesOf("41424344454647484980"))).toBe("ABCDEFGHI\uFFFD");
  });
});
