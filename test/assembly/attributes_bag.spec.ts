// StringMap, AttributeBag and AttributeValue: the containers every step of
// the order of application writes into (later writes replace earlier values).
import { AttributeBag } from "../../assembly/attributes/bag";
import { AttributeValue, ValueKind, StringMap } from "../../assembly/attributes/value";
import { attributeId, NO_ATTRIBUTE_ID, REQUEST_HOST, REQUEST_PATH } from "../../assembly/attributes/names";

describe("StringMap", () => {
  it("keeps insertion order; set replaces in place", () => {
    const m = new StringMap();
    m.set("b", "1");
    m.set("a", "2");
    m.set("b", "3");
    expect(m.size).toBe(2);
    expect(m.keys).toStrictEqual(["b", "a"]);
    expect(m.values).toStrictEqual(["3", "2"]);
    expect(m.get("b")).toBe("3");
    expect(m.has("a")).toBe(true);
  });

  it("setIfAbsent keeps the first occurrence (query parameters)", () => {
    const m = new StringMap();
    m.setIfAbsent("key", "first");
    m.setIfAbsent("key", "second");
    expect(m.get("key")).toBe("first");
    expect(m.size).toBe(1);
  });

  it("distinguishes absent (null) from present-and-empty", () => {
    const m = new StringMap();
    m.set("empty", "");
    expect(m.get("empty")).toBe("");
    expect(m.get("absent")).toBeNull();
    expect(m.has("absent")).toBe(false);
    expect(m.indexOf("absent")).toBe(-1);
  });

  it("is case-sensitive on keys", () => {
    const m = new StringMap();
    m.set("X-Api-Key", "v");
    expect(m.get("x-api-key")).toBeNull();
  });

  it("remove deletes one entry and keeps the others in order", () => {
    const m = new StringMap();
    m.set("a", "1");
    m.set("b", "2");
    m.set("c", "3");
    m.remove("b");
    m.remove("missing");
    expect(m.keys).toStrictEqual(["a", "c"]);
    expect(m.values).toStrictEqual(["1", "3"]);
  });

  it("clone is independent of the original", () => {
    const m = new StringMap();
    m.set("a", "1");
    const c = m.clone();
    c.set("a", "2");
    c.set("b", "3");
    expect(m.get("a")).toBe("1");
    expect(m.size).toBe(1);
    expect(c.get("a")).toBe("2");
  });
});

describe("AttributeBag", () => {
  it("later writes replace earlier ones and keep the first position", () => {
    const bag = new AttributeBag();
    bag.setString("a", "static");
    bag.setString("b", "x");
    bag.setString("a", "derived");
    expect(bag.size).toBe(2);
    expect(bag.names).toStrictEqual(["a", "b"]);
    expect(bag.getString("a")).toBe("derived");
  });

  it("merge copies every attribute over the bag (later wins)", () => {
    const base = new AttributeBag();
    base.setString("keep", "1");
    base.setString("over", "old");
    const top = new AttributeBag();
    top.setString("over", "new");
    top.set("n", AttributeValue.ofInt64(7));
    base.merge(top);
    expect(base.names).toStrictEqual(["keep", "over", "n"]);
    expect(base.getString("over")).toBe("new");
    expect(base.get("n")!.int).toBe(7);
  });

  it("getString is null for absent and for non-string values", () => {
    const bag = new AttributeBag();
    bag.set("n", AttributeValue.ofInt64(1));
    bag.set("b", AttributeValue.ofBytes(new Uint8Array(4)));
    bag.setString("s", "");
    expect(bag.getString("n")).toBeNull();
    expect(bag.getString("b")).toBeNull();
    expect(bag.getString("absent")).toBeNull();
    expect(bag.getString("s")).toBe("");
    expect(bag.has("n")).toBe(true);
    expect(bag.get("absent")).toBeNull();
  });

  it("lookupString addresses string-map entries with name[key]", () => {
    const headers = new StringMap();
    headers.set("x-user", "alice");
    headers.set("", "empty-name");
    const bag = new AttributeBag();
    bag.set("request.headers", AttributeValue.ofMap(headers));
    bag.setString("request.path", "/a");
    bag.set("request.size", AttributeValue.ofInt64(3));
    // Rows that must find a value.
    expect(bag.lookupString("request.headers[x-user]")).toBe("alice");
    expect(bag.lookupString("request.headers[]")).toBe("empty-name");
    expect(bag.lookupString("request.path")).toBe("/a");
    // Rows that must not.
    expect(bag.lookupString("request.headers[x-other]")).toBeNull();
    expect(bag.lookupString("request.headers[X-User]")).toBeNull();
    expect(bag.lookupString("request.path[x]")).toBeNull();
    expect(bag.lookupString("request.size")).toBeNull();
    expect(bag.lookupString("request.headers")).toBeNull();
    expect(bag.lookupString("missing[x]")).toBeNull();
  });

  it("clone is independent of the original", () => {
    const bag = new AttributeBag();
    bag.setString("a", "1");
    const c = bag.clone();
    c.setString("a", "2");
    c.setString("b", "3");
    expect(bag.getString("a")).toBe("1");
    expect(bag.has("b")).toBe(false);
  });
});

describe("AttributeValue", () => {
  it("numbers kinds as the AttributeValue oneof fields (attributes.proto)", () => {
    expect(<i32>ValueKind.String).toBe(2);
    expect(<i32>ValueKind.Int64).toBe(3);
    expect(<i32>ValueKind.Double).toBe(4);
    expect(<i32>ValueKind.Bool).toBe(5);
    expect(<i32>ValueKind.Bytes).toBe(6);
    expect(<i32>ValueKind.Timestamp).toBe(7);
    expect(<i32>ValueKind.Duration).toBe(8);
    expect(<i32>ValueKind.StringMap).toBe(9);
  });

  it("splits timestamps into seconds and non-negative nanos (protobuf Timestamp)", () => {
    const t = AttributeValue.ofTimestampNanos(1_700_000_000_123_456_789);
    expect(t.kind).toBe(ValueKind.Timestamp);
    expect(t.int).toBe(1_700_000_000);
    expect(t.nanos).toBe(123_456_789);
    const before = AttributeValue.ofTimestampNanos(-1);
    expect(before.int).toBe(-1);
    expect(before.nanos).toBe(999_999_999);
    const zero = AttributeValue.ofTimestampNanos(0);
    expect(zero.int).toBe(0);
    expect(zero.nanos).toBe(0);
  });

  it("keeps a negative duration's seconds and nanos of the same sign (protobuf Duration)", () => {
    const d = AttributeValue.ofDurationNanos(-1_500_000_000);
    expect(d.kind).toBe(ValueKind.Duration);
    expect(d.int).toBe(-1);
    expect(d.nanos).toBe(-500_000_000);
    const p = AttributeValue.ofDurationNanos(2_000_000_001);
    expect(p.int).toBe(2);
    expect(p.nanos).toBe(1);
  });

  it("builds each kind", () => {
    expect(AttributeValue.ofString("s").str).toBe("s");
    expect(AttributeValue.ofInt64(-5).int).toBe(-5);
    expect(AttributeValue.ofDouble(1.5).double).toBe(1.5);
    expect(AttributeValue.ofBool(true).bool).toBe(true);
    expect(AttributeValue.ofBytes(new Uint8Array(3)).bytes!.length).toBe(3);
    expect(AttributeValue.ofMap(new StringMap()).kind).toBe(ValueKind.StringMap);
    expect(AttributeValue.ofDouble(1.5).kind).toBe(ValueKind.Double);
    expect(AttributeValue.ofBool(false).kind).toBe(ValueKind.Bool);
  });
});

describe("AttributeBag by interned id", () => {
  it("finds by id what was set by name, and by name what was set by id", () => {
    const bag = new AttributeBag();
    bag.setString("request.path", "/a");
    expect(bag.getId(REQUEST_PATH)!.str).toBe("/a");
    bag.setIdString(REQUEST_HOST, "h");
    expect(bag.getString("request.host")).toBe("h");
    expect(bag.names).toStrictEqual(["request.path", "request.host"]);
  });

  it("a name read from the wire is not interned, yet found, replaced and merged", () => {
    const name = "wire.only.attribute.name";
    const bag = new AttributeBag();
    bag.setTransient(name, AttributeValue.ofString("1"));
    expect(attributeId(name)).toBe(NO_ATTRIBUTE_ID, "setTransient interns nothing");
    bag.setTransient(name, AttributeValue.ofString("2"));
    expect(bag.size).toBe(1);
    expect(bag.getString(name)).toBe("2");
    const copy = new AttributeBag();
    copy.merge(bag);
    expect(copy.getString(name)).toBe("2");
    // Interned later (a configuration naming it): the entry is still the one found and replaced.
    bag.set(name, AttributeValue.ofString("3"));
    expect(bag.size).toBe(1);
    expect(bag.getString(name)).toBe("3");
  });

  it("clear empties the bag for reuse, and it refills in the new order", () => {
    const bag = new AttributeBag(2);
    for (let i = 0; i < 40; i++) bag.setString("grow." + i.toString(), i.toString());
    expect(bag.size).toBe(40);
    bag.clear();
    expect(bag.size).toBe(0);
    expect(bag.get("grow.3")).toBeNull();
    bag.setString("grow.7", "x");
    bag.setString("grow.3", "y");
    expect(bag.names).toStrictEqual(["grow.7", "grow.3"]);
    expect(bag.getString("grow.3")).toBe("y");
  });
});

function listing(bag: AttributeBag): string {
  let s = "";
  for (let i = 0; i < bag.size; i++) {
    s += bag.nameAt(i) + "=" + bag.valueAt(i).str + ";";
    expect(bag.indexOf(bag.nameAt(i))).toBe(i, "found where it was set");
  }
  return s;
}

describe("AttributeBag.assign", () => {

  it("is clear then merge: the same entries in the same order, the old ones gone", () => {
    const from = new AttributeBag();
    from.setString("destination.service", "svc");
    from.setString("request.host", "h");
    from.setString("api.service", "api");
    const assigned = new AttributeBag();
    assigned.setString("request.path", "/old");
    assigned.setString("source.uid", "old");
    assigned.assign(from);
    const merged = new AttributeBag();
    merged.merge(from);
    expect(listing(assigned)).toBe(listing(merged));
    expect(assigned.getId(REQUEST_PATH)).toBeNull("an entry of before is gone");
    expect(assigned.get("source.uid")).toBeNull();
    expect(assigned.getId(REQUEST_HOST)!.str).toBe("h");
    // Set again after: a new entry goes at the end, an old name replaces in place.
    assigned.setString("request.path", "/new");
    assigned.setString("request.host", "h2");
    expect(listing(assigned)).toBe("destination.service=svc;request.host=h2;api.service=api;request.path=/new;");
  });

  it("takes merge's path for a bag with a name without an id, or one larger than its room", () => {
    const wire = new AttributeBag();
    wire.setString("request.host", "h");
    wire.setTransient("x-assign-wire-name", AttributeValue.ofString("w"));
    const a = new AttributeBag();
    a.assign(wire);
    expect(listing(a)).toBe("request.host=h;x-assign-wire-name=w;");
    const big = new AttributeBag();
    for (let i = 0; i < 40; i++) big.setString("assign.name" + i.toString(), i.toString());
    const small = new AttributeBag(4);
    small.setString("request.host", "old");
    small.assign(big);
    expect(small.size).toBe(40);
    expect(small.get("request.host")).toBeNull();
    expect(small.getString("assign.name39")).toBe("39");
  });
});
