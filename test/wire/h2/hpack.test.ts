// HPACK against RFC 7541 Appendix C (integers; requests and responses with
// and without Huffman coding, the dynamic table filling and evicting), the
// Huffman code against Appendix B's listed codes, and the errors a decoder
// must refuse.
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { HpackDecoder, HpackError, decodeInteger, encodeHeaderBlock, encodeInteger } from "../../../host/wire/h2/hpack.ts";
import { EOS, HUFFMAN_CODES, HUFFMAN_LENGTHS, huffmanDecode, huffmanEncode, huffmanLength } from "../../../host/wire/h2/huffman.ts";

const hex = (s: string) => Buffer.from(s.replace(/\s+/g, ""), "hex");
type Step = { block: string; fields: Array<[string, string]>; table: Array<[string, string]>; size: number };

function runSteps(decoder: HpackDecoder, steps: Step[]): void {
  for (const [i, step] of steps.entries()) {
    assert.deepEqual(decoder.decode(hex(step.block)), step.fields, `block ${i + 1}`);
    assert.deepEqual(decoder.tableEntries, step.table, `table after block ${i + 1}`);
    assert.equal(decoder.tableSize, step.size, `table size after block ${i + 1}`);
  }
}

const requests = (huffman: boolean): Step[] => [
  {
    block: huffman ? "8286 8441 8cf1 e3c2 e5f2 3a6b a0ab 90f4 ff" : "8286 8441 0f77 7777 2e65 7861 6d70 6c65 2e63 6f6d",
    fields: [
      [":method", "GET"],
      [":scheme", "http"],
      [":path", "/"],
      [":authority", "www.example.com"],
    ],
    table: [[":authority", "www.example.com"]],
    size: 57,
  },
  {
    block: huffman ? "8286 84be 5886 a8eb 1064 9cbf" : "8286 84be 5808 6e6f 2d63 6163 6865",
    fields: [
      [":method", "GET"],
      [":scheme", "http"],
      [":path", "/"],
      [":authority", "www.example.com"],
      ["cache-control", "no-cache"],
    ],
    table: [
      ["cache-control", "no-cache"],
      [":authority", "www.example.com"],
    ],
    size: 110,
  },
  {
    block: huffman ? "8287 85bf 4088 25a8 49e9 5ba9 7d7f 8925 a849 e95b b8e8 b4bf" : "8287 85bf 400a 6375 7374 6f6d 2d6b 6579 0c63 7573 746f 6d2d 7661 6c75 65",
    fields: [
      [":method", "GET"],
      [":scheme", "https"],
      [":path", "/index.html"],
      [":authority", "www.example.com"],
      ["custom-key", "custom-value"],
    ],
    table: [
      ["custom-key", "custom-value"],
      ["cache-control", "no-cache"],
      [":authority", "www.example.com"],
    ],
    size: 164,
  },
];

const DATE1 = "Mon, 21 Oct 2013 20:13:21 GMT";
const DATE2 = "Mon, 21 Oct 2013 20:13:22 GMT";
const COOKIE = "foo=ASDJKHQKBZXOQWEOPIUAXQWEOIU; max-age=3600; version=1";
const LOCATION = "https://www.example.com";
const responses = (huffman: boolean): Step[] => [
  {
    block: huffman
      ? "4882 6402 5885 aec3 771a 4b61 96d0 7abe 9410 54d4 44a8 2005 9504 0b81 66e0 82a6 2d1b ff6e 919d 29ad 1718 63c7 8f0b 97c8 e9ae 82ae 43d3"
      : "4803 3330 3258 0770 7269 7661 7465 611d 4d6f 6e2c 2032 3120 4f63 7420 3230 3133 2032 303a 3133 3a32 3120 474d 546e 1768 7474 7073 3a2f 2f77 7777 2e65 7861 6d70 6c65 2e63 6f6d",
    fields: [
      [":status", "302"],
      ["cache-control", "private"],
      ["date", DATE1],
      ["location", LOCATION],
    ],
    table: [
      ["location", LOCATION],
      ["date", DATE1],
      ["cache-control", "private"],
      [":status", "302"],
    ],
    size: 222,
  },
  {
    // ":status: 307" evicts ":status: 302" (the table holds 256 octets).
    block: huffman ? "4883 640e ffc1 c0bf" : "4803 3330 37c1 c0bf",
    fields: [
      [":status", "307"],
      ["cache-control", "private"],
      ["date", DATE1],
      ["location", LOCATION],
    ],
    table: [
      [":status", "307"],
      ["location", LOCATION],
      ["date", DATE1],
      ["cache-control", "private"],
    ],
    size: 222,
  },
  {
    block: huffman
      ? "88c1 6196 d07a be94 1054 d444 a820 0595 040b 8166 e084 a62d 1bff c05a 839b d9ab 77ad 94e7 821d d7f2 e6c7 b335 dfdf cd5b 3960 d5af 2708 7f36 72c1 ab27 0fb5 291f 9587 3160 65c0 03ed 4ee5 b106 3d50 07"
      : "88c1 611d 4d6f 6e2c 2032 3120 4f63 7420 3230 3133 2032 303a 3133 3a32 3220 474d 54c0 5a04 677a 6970 7738 666f 6f3d 4153 444a 4b48 514b 425a 584f 5157 454f 5049 5541 5851 5745 4f49 553b 206d 6178 2d61 6765 3d33 3630 303b 2076 6572 7369 6f6e 3d31",
    fields: [
      [":status", "200"],
      ["cache-control", "private"],
      ["date", DATE2],
      ["location", LOCATION],
      ["content-encoding", "gzip"],
      ["set-cookie", COOKIE],
    ],
    table: [
      ["set-cookie", COOKIE],
      ["content-encoding", "gzip"],
      ["date", DATE2],
    ],
    size: 215,
  },
];

describe("HPACK (RFC 7541 Appendix C)", () => {
  it("C.1 integers: 10 and 1337 with a 5-bit prefix, 42 at an octet boundary", () => {
    for (const [value, bits, bytes] of [
      [10, 5, "0a"],
      [1337, 5, "1f9a0a"],
      [42, 8, "2a"],
    ] as const) {
      const out = Buffer.alloc(4);
      const end = encodeInteger(out, 0, value, bits, 0);
      assert.equal(out.subarray(0, end).toString("hex"), bytes);
      assert.deepEqual(decodeInteger(hex(bytes), 0, bits), [value, bytes.length / 2]);
    }
  });

  it("C.2 literal fields: with indexing (added to the table), without indexing, never indexed, indexed", () => {
    const d = new HpackDecoder();
    assert.deepEqual(d.decode(hex("400a 6375 7374 6f6d 2d6b 6579 0d63 7573 746f 6d2d 6865 6164 6572")), [["custom-key", "custom-header"]]);
    assert.equal(d.tableSize, 55);
    assert.deepEqual(new HpackDecoder().decode(hex("040c 2f73 616d 706c 652f 7061 7468")), [[":path", "/sample/path"]]);
    const never = new HpackDecoder();
    assert.deepEqual(never.decode(hex("1008 7061 7373 776f 7264 0673 6563 7265 74")), [["password", "secret"]]);
    assert.equal(never.tableSize, 0);
    assert.deepEqual(new HpackDecoder().decode(hex("82")), [[":method", "GET"]]);
  });

  it("C.3 requests without Huffman coding, one decoder for the three", () => runSteps(new HpackDecoder(), requests(false)));
  it("C.4 requests with Huffman coding", () => runSteps(new HpackDecoder(), requests(true)));
  it("C.5 responses without Huffman coding, a 256-octet table evicting", () => runSteps(new HpackDecoder(256), responses(false)));
  it("C.6 responses with Huffman coding, a 256-octet table evicting", () => runSteps(new HpackDecoder(256), responses(true)));

  it("a size update shrinks the table and evicts; one above the advertised size, or after a field, is refused", () => {
    const d = new HpackDecoder(256);
    runSteps(d, responses(true).slice(0, 1));
    assert.deepEqual(d.decode(hex("3f 4d 82")), [[":method", "GET"]]); // size update to 31 + 77 = 108, then :method GET
    assert.deepEqual(d.tableEntries, [["location", LOCATION]]);
    assert.equal(d.tableSize, 23 + 8 + 32);
    assert.throws(() => d.decode(hex("3fe2 01")), HpackError); // 31 + 225 + … > 256
    assert.throws(() => new HpackDecoder().decode(hex("82 20")), /after a header field/);
  });

  it("refuses an index beyond the tables, a string past the block, EOS or bad padding in a Huffman string", () => {
    assert.throws(() => new HpackDecoder().decode(hex("be")), /beyond the tables/);
    assert.throws(() => new HpackDecoder().decode(hex("80")), /index 0/);
    assert.throws(() => new HpackDecoder().decode(hex("0405 2f61")), /longer than the header block/);
    // "a" (00011) padded with a 0 bit: padding must be 1s.
    assert.throws(() => new HpackDecoder().decode(hex("0481 18")), /invalid padding/);
    // 8 bits of 1s after "a": padding longer than 7 bits.
    assert.throws(() => new HpackDecoder().decode(hex("0482 1fff")), /invalid padding/);
    // EOS (30 ones) inside the string.
    assert.throws(() => new HpackDecoder().decode(hex("0484 ffff ffff")), /EOS|padding/);
  });

  it("encodes fields as static indices or literals without indexing, which a decoder reads back and does not index", () => {
    const fields: Array<[string, string]> = [
      [":method", "POST"],
      [":scheme", "http"],
      [":path", "/mesh.hub.v1.Hub/Check"],
      ["content-type", "application/grpc"],
      ["te", "trailers"],
      ["x-long", "v".repeat(300)],
    ];
    const block = encodeHeaderBlock(fields);
    assert.equal(block[0], 0x83);
    assert.equal(block[1], 0x86);
    const d = new HpackDecoder();
    assert.deepEqual(d.decode(block), fields);
    assert.equal(d.tableSize, 0);
  });
});

describe("HPACK's Huffman code (RFC 7541 Appendix B)", () => {
  it("is complete and has the codes the RFC lists", () => {
    let kraft = 0;
    for (let s = 0; s <= EOS; s++) kraft += 2 ** -HUFFMAN_LENGTHS[s];
    assert.equal(kraft, 1);
    for (const [symbol, code, length] of [
      [0, 0x1ff8, 13],
      [1, 0x7fffd8, 23],
      [9, 0xffffea, 24],
      [10, 0x3ffffffc, 30],
      [22, 0x3ffffffe, 30],
      [26, 0xffffff6, 28],
      [0x20, 0x14, 6],
      [0x30, 0x0, 5],
      [0x41, 0x21, 6],
      [0x7a, 0x7b, 7],
      [EOS, 0x3fffffff, 30],
    ] as const) {
      assert.equal(HUFFMAN_CODES[symbol], code, `symbol ${symbol}`);
      assert.equal(HUFFMAN_LENGTHS[symbol], length, `symbol ${symbol}`);
    }
  });

  it("round-trips every octet", () => {
    const all = String.fromCharCode(...Array.from({ length: 256 }, (_, i) => i));
    const out = new Uint8Array(huffmanLength(all));
    assert.equal(huffmanEncode(all, out, 0), out.length);
    assert.equal(huffmanDecode(out), all);
  });
});
