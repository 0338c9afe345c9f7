// A small JSON reader for the plugin configuration. It returns errors as
// values: a configuration typo must make proxy_on_configure answer false,
// never trap the module (assemblyscript-json asserts, which would).

export const enum JsonKind {
  Null,
  Bool,
  Number,
  String,
  Array,
  Object,
}

export class JsonValue {
  kind: JsonKind = JsonKind.Null;
  bool: bool = false;
  /** The number's source text, so int64 values keep every digit. */
  numberText: string = "";
  str: string = "";
  items: Array<JsonValue> = [];
  /** Object members in document order. */
  keys: Array<string> = [];
  values: Array<JsonValue> = [];

  get(name: string): JsonValue | null {
    for (let i = 0; i < this.keys.length; i++) {
      if (this.keys[i] == name) return this.values[i];
    }
    return null;
  }

  isNull(): bool {
    return this.kind == JsonKind.Null;
  }
}

export class JsonResult {
  constructor(
    public value: JsonValue | null,
    public error: string,
  ) {}
}

export function parseJson(text: string): JsonResult {
  const reader = new JsonReader(text);
  reader.skipSpace();
  const value = reader.readValue(0);
  if (value !== null) {
    reader.skipSpace();
    if (reader.pos < text.length) reader.fail("unexpected text after the JSON value");
  }
  if (reader.error.length > 0) return new JsonResult(null, reader.error);
  return new JsonResult(value, "");
}

// Nesting deeper than this is refused rather than risking the stack.
const MAX_DEPTH = 64;

class JsonReader {
  pos: i32 = 0;
  error: string = "";

  constructor(public text: string) {}

  fail(message: string): void {
    if (this.error.length == 0) this.error = "invalid JSON at offset " + this.pos.toString() + ": " + message;
  }

  skipSpace(): void {
    const t = this.text;
    while (this.pos < t.length) {
      const c = t.charCodeAt(this.pos);
      if (c != 0x20 && c != 0x09 && c != 0x0a && c != 0x0d) break;
      this.pos++;
    }
  }

  readValue(depth: i32): JsonValue | null {
    if (depth > MAX_DEPTH) {
      this.fail("nested too deeply");
      return null;
    }
    if (this.pos >= this.text.length) {
      this.fail("unexpected end");
      return null;
    }
    const c = this.text.charCodeAt(this.pos);
    if (c == 0x7b) return this.readObject(depth);
    if (c == 0x5b) return this.readArray(depth);
    if (c == 0x22) {
      const s = this.readString();
      if (s === null) return null;
      const v = new JsonValue();
      v.kind = JsonKind.String;
      v.str = s;
      return v;
    }
    if (c == 0x2d || (c >= 0x30 && c <= 0x39)) return this.readNumber();
    if (this.text.startsWith("true", this.pos)) return this.literal(4, JsonKind.Bool, true);
    if (this.text.startsWith("false", this.pos)) return this.literal(5, JsonKind.Bool, false);
    if (this.text.startsWith("null", this.pos)) return this.literal(4, JsonKind.Null, false);
    this.fail("unexpected character");
    return null;
  }

  literal(length: i32, kind: JsonKind, b: bool): JsonValue {
    this.pos += length;
    const v = new JsonValue();
    v.kind = kind;
    v.bool = b;
    return v;
  }

  // RFC 8259 §6: -? (0 | [1-9][0-9]*) (. [0-9]+)? ([eE] [+-]? [0-9]+)?
  readNumber(): JsonValue | null {
    const t = this.text;
    const start = this.pos;
    if (this.peekIs(0x2d)) this.pos++;
    if (this.peekIs(0x30)) this.pos++;
    else if (this.skipDigits() == 0) {
      this.fail("malformed number");
      return null;
    }
    if (this.peekIs(0x2e)) {
      this.pos++;
      if (this.skipDigits() == 0) {
        this.fail("malformed number");
        return null;
      }
    }
    if (this.peekIs(0x65) || this.peekIs(0x45)) {
      this.pos++;
      if (this.peekIs(0x2b) || this.peekIs(0x2d)) this.pos++;
      if (this.skipDigits() == 0) {
        this.fail("malformed number");
        return null;
      }
    }
    const v = new JsonValue();
    v.kind = JsonKind.Number;
    v.numberText = t.substring(start, this.pos);
    return v;
  }

  peekIs(c: i32): bool {
    return this.pos < this.text.length && this.text.charCodeAt(this.pos) == c;
  }

  skipDigits(): i32 {
    let n = 0;
    while (this.pos < this.text.length) {
      const c = this.text.charCodeAt(this.pos);
      if (c < 0x30 || c > 0x39) break;
      this.pos++;
      n++;
    }
    return n;
  }

  readString(): string | null {
    const t = this.text;
    this.pos++; // opening quote
    let out = "";
    let runStart = this.pos;
    while (this.pos < t.length) {
      const c = t.charCodeAt(this.pos);
      if (c == 0x22) {
        out += t.substring(runStart, this.pos);
        this.pos++;
        return out;
      }
      if (c < 0x20) {
        this.fail("control character in string");
        return null;
      }
      if (c == 0x5c) {
        out += t.substring(runStart, this.pos);
        if (this.pos + 1 >= t.length) break;
        const e = t.charCodeAt(this.pos + 1);
        this.pos += 2;
        if (e == 0x22) out += "\"";
        else if (e == 0x5c) out += "\\";
        else if (e == 0x2f) out += "/";
        else if (e == 0x62) out += "\b";
        else if (e == 0x66) out += "\f";
        else if (e == 0x6e) out += "\n";
        else if (e == 0x72) out += "\r";
        else if (e == 0x74) out += "\t";
        else if (e == 0x75) {
          const code = this.hex4();
          if (code < 0) return null;
          out += String.fromCharCode(code);
        } else {
          this.fail("bad escape");
          return null;
        }
        runStart = this.pos;
        continue;
      }
      this.pos++;
    }
    this.fail("unterminated string");
    return null;
  }

  hex4(): i32 {
    if (this.pos + 4 > this.text.length) {
      this.fail("short \\u escape");
      return -1;
    }
    let code = 0;
    for (let i = 0; i < 4; i++) {
      const c = this.text.charCodeAt(this.pos + i);
      let d = -1;
      if (c >= 0x30 && c <= 0x39) d = c - 0x30;
      else if (c >= 0x61 && c <= 0x66) d = c - 0x61 + 10;
      else if (c >= 0x41 && c <= 0x46) d = c - 0x41 + 10;
      if (d < 0) {
        this.fail("bad \\u escape");
        return -1;
      }
      code = code * 16 + d;
    }
    this.pos += 4;
    return code;
  }

  readArray(depth: i32): JsonValue | null {
    const v = new JsonValue();
    v.kind = JsonKind.Array;
    this.pos++;
    this.skipSpace();
    if (this.pos < this.text.length && this.text.charCodeAt(this.pos) == 0x5d) {
      this.pos++;
      return v;
    }
    while (true) {
      this.skipSpace();
      const item = this.readValue(depth + 1);
      if (item === null) return null;
      v.items.push(item);
      this.skipSpace();
      if (this.pos >= this.text.length) break;
      const c = this.text.charCodeAt(this.pos++);
      if (c == 0x5d) return v;
      if (c != 0x2c) {
        this.pos--;
        this.fail("expected , or ]");
        return null;
      }
    }
    this.fail("unterminated array");
    return null;
  }

  readObject(depth: i32): JsonValue | null {
    const v = new JsonValue();
    v.kind = JsonKind.Object;
    this.pos++;
    this.skipSpace();
    if (this.pos < this.text.length && this.text.charCodeAt(this.pos) == 0x7d) {
      this.pos++;
      return v;
    }
    while (true) {
      this.skipSpace();
      if (this.pos >= this.text.length || this.text.charCodeAt(this.pos) != 0x22) {
        this.fail("expected a member name");
        return null;
      }
      const key = this.readString();
      if (key === null) return null;
      this.skipSpace();
      if (this.pos >= this.text.length || this.text.charCodeAt(this.pos) != 0x3a) {
        this.fail("expected :");
        return null;
      }
      this.pos++;
      this.skipSpace();
      const value = this.readValue(depth + 1);
      if (value === null) return null;
      v.keys.push(key);
      v.values.push(value);
      this.skipSpace();
      if (this.pos >= this.text.length) break;
      const c = this.text.charCodeAt(this.pos++);
      if (c == 0x7d) return v;
      if (c != 0x2c) {
        this.pos--;
        this.fail("expected , or }");
        return null;
      }
    }
    this.fail("unterminated object");
    return null;
  }
}
