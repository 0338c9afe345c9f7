// Hub messages read back as text for the hub specs (hub_requests.spec.ts):
// a compact item per field, naming field numbers and dictionary indexes,
// and the small inputs those specs build their bags from.
import { ProtoReader } from "../../assembly/proto/reader";
import { ProtoWriter, WIRE_FIXED64 } from "../../assembly/proto/writer";
import { AttributeBag } from "../../assembly/attributes/bag";
import { StringMap } from "../../assembly/attributes/value";
import { MessageDictionary } from "../../assembly/hub/dictionary";
import { CompressedAttributesWriter } from "../../assembly/hub/compressed_attributes";
import { GLOBAL_WORD_COUNT } from "../../assembly/hub/global_words";

export function hex(b: Uint8Array): string {
  let s = "";
  for (let i = 0; i < b.length; i++) {
    const v = <i32>b[i];
    s += (v < 16 ? "0" : "") + v.toString(16);
  }
  return s;
}

export function asciiHex(s: string): string {
  return hex(Uint8Array.wrap(String.UTF8.encode(s)));
}

/** {key = 1, value = 2} of a map entry: the key as sint32 and a reader on the value. */
export function entryKey(r: ProtoReader): i32 {
  let key = 0;
  while (r.next()) {
    if (r.field == 1) key = r.sint32();
    else if (r.field == 2) return key;
    else r.skip();
  }
  return key;
}

export function secondsNanos(r: ProtoReader): string {
  let s: i64 = 0;
  let n: i64 = 0;
  while (r.next()) {
    if (r.field == 1) s = <i64>r.varint();
    else if (r.field == 2) n = <i64>(<i32>r.varint());
    else r.skip();
  }
  return s.toString() + "/" + n.toString();
}

/** CompressedAttributes as text, one item per map entry in wire order. */
export function renderAttributes(r: ProtoReader): string {
  const parts = new Array<string>();
  while (r.next()) {
    const field = r.field;
    if (field == 1) {
      parts.push("w:" + r.string());
      continue;
    }
    const e = r.message();
    const k = entryKey(e);
    const at = "[" + k.toString() + "]=";
    if (field == 2) parts.push("s" + at + e.sint32().toString());
    else if (field == 3) parts.push("i" + at + (<i64>e.varint()).toString());
    else if (field == 4) parts.push("d" + at + (e.wire == WIRE_FIXED64 ? e.double().toString() : "?"));
    else if (field == 5) parts.push("b" + at + (e.varint() != 0 ? "true" : "false"));
    else if (field == 6) parts.push("t" + at + secondsNanos(e.message()));
    else if (field == 7) parts.push("u" + at + secondsNanos(e.message()));
    else if (field == 8) parts.push("y" + at + hex(e.bytes()));
    else if (field == 9) {
      const m = e.message();
      const pairs = new Array<string>();
      while (m.next()) {
        const p = m.message();
        const pk = entryKey(p);
        pairs.push(pk.toString() + ":" + p.sint32().toString());
      }
      parts.push("m" + at + "{" + pairs.join(",") + "}");
    } else parts.push("?" + field.toString());
  }
  return parts.join(" ");
}

export function renderCheck(buf: Uint8Array): string {
  const r = new ProtoReader(buf);
  const parts = new Array<string>();
  while (r.next()) {
    if (r.field == 1) parts.push("attributes(" + renderAttributes(r.message()) + ")");
    else if (r.field == 2) parts.push("gwc=" + r.varint().toString());
    else if (r.field == 3) parts.push("id=" + r.string());
    else if (r.field == 4) {
      const e = r.message();
      let name = "";
      let amount: i64 = 0;
      let bestEffort = false;
      while (e.next()) {
        if (e.field == 1) name = e.string();
        else if (e.field == 2) {
          const p = e.message();
          while (p.next()) {
            if (p.field == 1) amount = <i64>p.varint();
            else if (p.field == 2) bestEffort = p.varint() != 0;
            else p.skip();
          }
        } else e.skip();
      }
      parts.push("q[" + name + "]=" + amount.toString() + (bestEffort ? "/best-effort" : ""));
    } else parts.push("?" + r.field.toString());
  }
  return parts.join(" ");
}

export function renderReport(buf: Uint8Array): string {
  const r = new ProtoReader(buf);
  const parts = new Array<string>();
  while (r.next()) {
    if (r.field == 1) parts.push("entry(" + renderAttributes(r.message()) + ")");
    else if (r.field == 2) parts.push("dw:" + r.string());
    else if (r.field == 3) parts.push("gwc=" + r.varint().toString());
    else if (r.field == 4) parts.push("semantics=" + r.varint().toString());
    else parts.push("?" + r.field.toString());
  }
  return parts.join(" ");
}

export function compress(bag: AttributeBag, globalWordCount: i32 = GLOBAL_WORD_COUNT): string {
  const w = new ProtoWriter();
  new CompressedAttributesWriter().write(w, bag, new MessageDictionary(globalWordCount), true);
  return renderAttributes(new ProtoReader(w.finish()));
}

export function headers(k: string, v: string): StringMap {
  const m = new StringMap();
  m.set(k, v);
  return m;
}


export function bytesOf(n: i32): Uint8Array {
  const b = new Uint8Array(n);
  for (let i = 0; i < n; i++) b[i] = <u8>i;
  return b;
}

export function headersOf(path: string, agent: string): StringMap {
  const m = new StringMap();
  m.set(":path", path);
  m.set("user-agent", agent);
  return m;
}
