// The hub's word tables: the global list (proto/mesh/hub/v1/global_words.json,
// compiled into assembly/hub/global_words.ts) and the per-message dictionary.
// Indexes from hub-client.md §9.2: request.headers = 15, authorization = 50.
import { GLOBAL_WORDS, GLOBAL_WORD_COUNT, globalWordIndex } from "../../assembly/hub/global_words";
import { MessageDictionary } from "../../assembly/hub/dictionary";

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
