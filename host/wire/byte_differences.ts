// Where two ranges of a buffer first differ, in WebAssembly: eight bytes per
// step, where JavaScript spends several instructions on each byte read from a
// Buffer (report_slots_reader.ts compares each Report entry with the one
// before). FIRST_DIFFERENCE_WASM is FIRST_DIFFERENCE_WAT compiled by
// binaryen (test/wire/byte_differences.test.ts compiles it again and compares).

export const FIRST_DIFFERENCE_WAT = `(module
  (memory (export "memory") 1)
  (func (export "firstDifference") (param $a i32) (param $b i32) (param $i i32) (param $n i32) (result i32)
    (block $bytes
      (loop $words
        (br_if $bytes (i32.gt_u (i32.add (local.get $i) (i32.const 8)) (local.get $n)))
        (br_if $bytes (i64.ne (i64.load (i32.add (local.get $a) (local.get $i))) (i64.load (i32.add (local.get $b) (local.get $i)))))
        (local.set $i (i32.add (local.get $i) (i32.const 8)))
        (br $words)))
    (block $done
      (loop $each
        (br_if $done (i32.ge_u (local.get $i) (local.get $n)))
        (br_if $done (i32.ne (i32.load8_u (i32.add (local.get $a) (local.get $i))) (i32.load8_u (i32.add (local.get $b) (local.get $i)))))
        (local.set $i (i32.add (local.get $i) (i32.const 1)))
        (br $each)))
    (local.get $i)))`;

export const FIRST_DIFFERENCE_WASM = Buffer.from(
  "AGFzbQEAAAABCQFgBH9/f38BfwMCAQAFAwEAAQccAgZtZW1vcnkCAA9maXJzdERpZmZlcmVuY2UAAApdAVsAAkADQCACQQhqIANLDQEgACACaikDACABIAJqKQMAUg0BIAJBCGohAgwACwALAkADQCACIANPDQEgACACai0AACABIAJqLQAARw0BIAJBAWohAgwACwALIAIL",
  "base64",
);

/** The first `i` from `i` below `n` where the bytes at `a + i` and `b + i` differ, or `n`. */
export type FirstDifference = (a: number, b: number, i: number, n: number) => number;

const PAGE = 65536;
let compiled: { memory: WebAssembly.Memory; firstDifference: FirstDifference } | undefined;

/**
 * firstDifference over a copy of `bytes` (positions as in `bytes`), valid
 * until the next call. The memory grows to the largest buffer given (a
 * Report is at most the hub's message limit) and stays.
 */
export function differencesIn(bytes: Uint8Array): FirstDifference {
  if (compiled === undefined) {
    const { exports } = new WebAssembly.Instance(new WebAssembly.Module(FIRST_DIFFERENCE_WASM));
    compiled = { memory: exports.memory as WebAssembly.Memory, firstDifference: exports.firstDifference as FirstDifference };
  }
  const { memory } = compiled;
  // Eight bytes past the end: none is read (every step stays below n), but an i64 load at the last word must stay within the memory.
  const need = bytes.length + 8;
  if (memory.buffer.byteLength < need) memory.grow(Math.ceil((need - memory.buffer.byteLength) / PAGE));
  new Uint8Array(memory.buffer, 0, bytes.length).set(bytes);
  return compiled.firstDifference;
}
