// The hub's word tables: the global list (proto/mesh/hub/v1/global_words.json,
// compiled into assembly/hub/global_words.ts) and the per-message dictionary.
// Indexes from hub-client.md §9.2: request.headers = 15, authorization = 50.
import { GLOBAL_WORDS, GLOBAL_WORD_COUNT } from "../../assembly/hub/global_words";
import { MessageDictionary, globalWordIndex } from "../../assembly/hub/dictionary";
import { NO_WORD, WordTable, asciiWordHash, wordHash } from "../../assembly/hub/word_table";

function utf8(s: string): ArrayBuffer {
  return String.UTF8.encode(s);
}

describe("global words", () => {
  it("holds the 222 words of istio/api@31d0489, index = position", () => {
    expect(GLOBAL_WORD_COUNT).toBe(222);
    expect(GLOBAL_WORDS.length).toBe(222);
    expect(GLOBAL_WORDS[0]).toBe("source.ip");
    expect(GLOBAL_WORDS[15]).toBe("request.headers");
    expect(GLOBAL_WORDS[50]).toBe("authorization");
  });

  it("finds every word at its first index", () => {
    for (let i = 0; i < GLOBAL_WORDS.length; i++) {
      const w = GLOBAL_WORDS[i];
      // "200", "0", "1" are listed twice (94/136, 111/134, 112/135).
      const first = w == "200" ? 94 : w == "0" ? 111 : w == "1" ? 112 : i;
      expect(globalWordIndex(w)).toBe(first, w);
    }
  });

  it("answers -1 for a string that is not a global word", () => {
    expect(globalWordIndex("JWT-Token")).toBe(-1);
    expect(globalWordIndex("")).toBe(-1);
    expect(globalWordIndex("REQUEST.HEADERS")).toBe(-1);
  });

  it("keeps the unquoted form of the words upstream's C++ client quoted (94, 111, 112, 218)", () => {
    expect(GLOBAL_WORDS[94]).toBe("200");
    expect(GLOBAL_WORDS[111]).toBe("0");
    expect(GLOBAL_WORDS[112]).toBe("1");
    expect(GLOBAL_WORDS[218]).toBe("-");
  });
});

describe("MessageDictionary", () => {
  it("uses global indexes and numbers the other strings -1, -2, … in first-use order", () => {
    const d = new MessageDictionary();
    expect(d.index("request.headers")).toBe(15);
    expect(d.index("JWT-Token")).toBe(-1);
    expect(d.index("authorization")).toBe(50);
    expect(d.index("my.attr")).toBe(-2);
    expect(d.index("JWT-Token")).toBe(-1);
    expect(d.index("x")).toBe(-3);
    expect(d.words.join(",")).toBe("JWT-Token,my.attr,x");
  });

  it("gives the empty string a message index (it is not a global word)", () => {
    const d = new MessageDictionary();
    expect(d.index("")).toBe(-1);
    expect(d.index("")).toBe(-1);
    expect(d.words.length).toBe(1);
  });

  it("sends global words beyond the peer's count as message words", () => {
    const d = new MessageDictionary(111);
    expect(d.globalWordCount).toBe(111);
    expect(d.index("source.ip")).toBe(0);
    expect(d.index(GLOBAL_WORDS[110])).toBe(110);
    expect(d.index(GLOBAL_WORDS[150])).toBe(-1);
    expect(d.words[0]).toBe(GLOBAL_WORDS[150]);
  });

  it("clamps the count to the words we have", () => {
    expect(new MessageDictionary(1000).globalWordCount).toBe(222);
    expect(new MessageDictionary(-5).globalWordCount).toBe(0);
    const none = new MessageDictionary(0);
    expect(none.index("source.ip")).toBe(-1);
  });

  it("indexes text given as UTF-8 bytes as it indexes the same string, making a string only for a new word", () => {
    const byString = new MessageDictionary();
    const byBytes = new MessageDictionary();
    const texts = ["request.headers", "JWT-Token", "authorization", "naïve ✓", "JWT-Token", "", "x", "naïve ✓", "200", "abcdefghi"];
    for (let i = 0; i < texts.length; i++) {
      const b = utf8(texts[i]);
      expect(byBytes.indexBytes(changetype<usize>(b), <usize>b.byteLength)).toBe(byString.index(texts[i]), texts[i]);
    }
    expect(byBytes.words.join(",")).toBe(byString.words.join(","));
  });

  it("keeps global words beyond the peer's count out of the global range for bytes too", () => {
    const d = new MessageDictionary(10);
    const b = utf8("request.headers");
    expect(d.indexBytes(changetype<usize>(b), <usize>b.byteLength)).toBe(-1);
    expect(d.index("request.headers")).toBe(-1);
  });

  it("hashes ASCII bytes as wordHash hashes their string, at every length; other bytes are refused", () => {
    const text = "abcdefghijklmnopq:/-_.XYZ";
    for (let n = 0; n <= text.length; n++) {
      const s = text.substring(0, n);
      const b = utf8(s);
      expect(asciiWordHash(changetype<usize>(b), <usize>b.byteLength)).toBe(<i64>wordHash(s), s);
    }
    const other = utf8("caf\u00e9");
    expect(asciiWordHash(changetype<usize>(other), <usize>other.byteLength)).toBe(-1);
  });

  it("starts over after reset, with the new count", () => {
    const d = new MessageDictionary();
    d.index("a");
    d.index("b");
    d.reset();
    expect(d.words.length).toBe(0);
    expect(d.index("b")).toBe(-1);
    expect(d.index("a")).toBe(-2);
    d.reset(1);
    expect(d.index("source.port")).toBe(-1);
    expect(d.index("source.ip")).toBe(0);
    expect(d.words.join(",")).toBe("source.port");
  });

  it("keeps thousands of message words distinct", () => {
    const d = new MessageDictionary();
    for (let i = 0; i < 3000; i++) expect(d.index("w" + i.toString())).toBe(-1 - i);
    for (let i = 0; i < 3000; i += 7) expect(d.index("w" + i.toString())).toBe(-1 - i);
    expect(d.words.length).toBe(3000);
  });
});

describe("WordTable", () => {
  it("finds what was added, by equal text as well as by the same string", () => {
    const t = new WordTable(4);
    t.add("alpha", wordHash("alpha"), 1);
    t.add("beta", wordHash("beta"), -2);
    const copy = "al" + "pha";
    expect(t.find(copy, wordHash(copy))).toBe(1);
    expect(t.find("beta", wordHash("beta"))).toBe(-2);
    expect(t.find("gamma", wordHash("gamma"))).toBe(NO_WORD);
    expect(t.size).toBe(2);
  });

  it("grows past its capacity and keeps every entry", () => {
    const t = new WordTable(2);
    for (let i = 0; i < 1000; i++) t.add("w" + i.toString(), wordHash("w" + i.toString()), -i - 1);
    for (let i = 0; i < 1000; i++) expect(t.find("w" + i.toString(), wordHash("w" + i.toString()))).toBe(-i - 1);
    expect(t.size).toBe(1000);
  });

  it("removes an entry without losing the ones filed after it", () => {
    const t = new WordTable(64);
    // Every key under one hash: a single probe run, the worst case for removal.
    for (let i = 0; i < 10; i++) t.add("k" + i.toString(), 7, i);
    t.remove("k3", 7);
    expect(t.find("k3", 7)).toBe(NO_WORD);
    for (let i = 0; i < 10; i++) if (i != 3) expect(t.find("k" + i.toString(), 7)).toBe(i);
    expect(t.size).toBe(9);
  });

  it("clear empties it, and it fills again", () => {
    const t = new WordTable(8);
    t.add("x", wordHash("x"), 1);
    t.clear();
    expect(t.find("x", wordHash("x"))).toBe(NO_WORD);
    expect(t.size).toBe(0);
    t.add("x", wordHash("x"), 2);
    expect(t.find("x", wordHash("x"))).toBe(2);
  });
});

describe("MessageDictionary after a truncate", () => {
  it("forgets the words taken back, keeps the others, and numbers the next word after the kept ones", () => {
    const d = new MessageDictionary();
    d.index("a1");
    d.index("a2");
    d.index("a3");
    d.truncate(1);
    expect(d.words.join(",")).toBe("a1");
    expect(d.index("a1")).toBe(-1);
    expect(d.index("a3")).toBe(-2);
    expect(d.words.join(",")).toBe("a1,a3");
  });
});
