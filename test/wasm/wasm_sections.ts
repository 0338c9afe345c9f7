import { readFileSync } from "node:fs";

/** A function signature, e.g. `(i32,i32,i64)->i32`. */
export type Signature = string;

export interface ModuleSections {
  imports: Array<{ module: string; name: string; kind: string; signature?: Signature }>;
  exports: Array<{ name: string; kind: string; signature?: Signature }>;
  hasStart: boolean;
}

const VALUE_TYPES: Record<number, string> = { 0x7f: "i32", 0x7e: "i64", 0x7d: "f32", 0x7c: "f64", 0x7b: "v128", 0x70: "funcref", 0x6f: "externref" };
const KINDS = ["func", "table", "memory", "global", "tag"];

/**
 * Reads the type, import, function, export and start sections of a wasm
 * binary: what a proxy checks when it links the module.
 */
export function readSections(path: string): ModuleSections {
  const b = readFileSync(path);
  let pos = 8;
  const u32 = () => {
    let result = 0;
    let shift = 0;
    for (;;) {
      const byte = b[pos++];
      result |= (byte & 0x7f) << shift;
      if (byte < 0x80) return result >>> 0;
      shift += 7;
    }
  };
  const name = () => {
    const n = u32();
    const s = b.toString("utf8", pos, pos + n);
    pos += n;
    return s;
  };
  const types: Signature[] = [];
  const funcTypes: number[] = [];
  const out: ModuleSections = { imports: [], exports: [], hasStart: false };
  let importedFuncs = 0;
  while (pos < b.length) {
    const id = b[pos++];
    const size = u32();
    const end = pos + size;
    if (id === 1) {
      for (let n = u32(); n > 0; n--) {
        pos++; // 0x60
        const params = Array.from({ length: u32() }, () => VALUE_TYPES[b[pos++]]);
        const results = Array.from({ length: u32() }, () => VALUE_TYPES[b[pos++]]);
        types.push(`(${params.join(",")})->${results.join(",") || "()"}`);
      }
    } else if (id === 2) {
      for (let n = u32(); n > 0; n--) {
        const module = name();
        const field = name();
        const kind = b[pos++];
        if (kind === 0) {
          const t = u32();
          importedFuncs++;
          out.imports.push({ module, name: field, kind: "func", signature: types[t] });
        } else {
          out.imports.push({ module, name: field, kind: KINDS[kind] });
          if (kind === 1) {
            pos++;
            const f = b[pos++];
            u32();
            if (f & 1) u32();
          } else if (kind === 2) {
            const f = b[pos++];
            u32();
            if (f & 1) u32();
          } else if (kind === 3) pos += 2;
        }
      }
    } else if (id === 3) {
      for (let n = u32(); n > 0; n--) funcTypes.push(u32());
    } else if (id === 7) {
      for (let n = u32(); n > 0; n--) {
        const field = name();
        const kind = b[pos++];
        const index = u32();
        const signature = kind === 0 && index >= importedFuncs ? types[funcTypes[index - importedFuncs]] : undefined;
        out.exports.push({ name: field, kind: KINDS[kind], signature });
      }
    } else if (id === 8) {
      out.hasStart = true;
    }
    pos = end;
  }
  return out;
}
