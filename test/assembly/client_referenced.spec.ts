// Referenced-attributes shapes (hub-client §6.1; upstream referenced.cc,
// referenced_test.cc): applies / cacheable / signature / canonical key.
import { AttributeBag } from "../../assembly/attributes/bag";
import { AttributeValue, ValueKind, StringMap } from "../../assembly/attributes/value";
import { Condition, ReferencedAttribute, ReferencedShape } from "../../assembly/client/referenced";

function ref(name: string, condition: i32, mapKey: string | null = null): ReferencedAttribute {
  return new ReferencedAttribute(name, condition, mapKey);
}

function headers(keys: string[], values: string[]): AttributeValue {
  const m = new StringMap();
  for (let i = 0; i < keys.length; i++) m.set(keys[i], values[i]);
  return AttributeValue.ofMap(m);
}

function request(): AttributeBag {
  const b = new AttributeBag();
  b.setString("source.principal", "alice");
  b.setString("request.path", "/books");
  b.set("request.size", AttributeValue.ofInt64(42));
  b.set("request.headers", headers(["x-user", "x-trace"], ["alice", "t1"]));
  return b;
}

class Row {
  constructor(
    public label: string,
    public refs: Array<ReferencedAttribute>,
    public applies: bool,
  ) {}
}

function appliesRows(): Row[] {
  return [
    new Row("empty shape", [], true),
    new Row("EXACT present", [ref("source.principal", Condition.Exact)], true),
    new Row("EXACT absent", [ref("destination.uid", Condition.Exact)], false),
    new Row("ABSENCE absent", [ref("destination.uid", Condition.Absence)], true),
    new Row("ABSENCE present", [ref("source.principal", Condition.Absence)], false),
    new Row("EXACT map key present", [ref("request.headers", Condition.Exact, "x-user")], true),
    new Row("EXACT map key absent", [ref("request.headers", Condition.Exact, "x-other")], false),
    new Row("ABSENCE map key absent", [ref("request.headers", Condition.Absence, "x-debug")], true),
    new Row("ABSENCE map key present", [ref("request.headers", Condition.Absence, "x-trace")], false),
    new Row("ABSENCE map key, map absent", [ref("response.headers", Condition.Absence, "x")], true),
    new Row("EXACT map key on a non-map", [ref("request.path", Condition.Exact, "x")], false),
    new Row("ABSENCE map key on a non-map", [ref("request.path", Condition.Absence, "x")], false),
    new Row("EXACT whole map", [ref("request.headers", Condition.Exact)], true),
    new Row("EXACT and ABSENCE of one name", [ref("request.path", Condition.Exact), ref("request.path", Condition.Absence)], false),
    new Row(
      "mixed, all hold",
      [
        ref("request.headers", Condition.Exact, "x-user"),
        ref("request.headers", Condition.Absence, "x-debug"),
        ref("request.size", Condition.Exact),
        ref("request.auth.principal", Condition.Absence),
      ],
      true,
    ),
  ];
}

describe("ReferencedShape.applies", () => {
  it("table", () => {
    const rows = appliesRows();
    const bag = request();
    for (let i = 0; i < rows.length; i++) {
      const row = rows[i];
      const shape = new ReferencedShape(row.refs);
      expect(shape.applies(bag)).toBe(row.applies, row.label);
      expect(shape.cacheableFor(bag)).toBe(row.applies, row.label);
    }
  });

  it("REGEX makes a shape unsupported (never cacheable) but it may still apply", () => {
    const shape = new ReferencedShape([ref("source.principal", Condition.Exact), ref("request.path", Condition.Regex)]);
    expect(shape.supported).toBe(false);
    expect(shape.applies(request())).toBe(true);
    expect(shape.cacheableFor(request())).toBe(false);
  });
});

describe("ReferencedShape.signature", () => {
  it("depends on the EXACT values only", () => {
    const shape = new ReferencedShape([
      ref("source.principal", Condition.Exact),
      ref("request.headers", Condition.Exact, "x-user"),
      ref("destination.uid", Condition.Absence),
    ]);
    const a = request();
    const b = request();
    b.setString("request.path", "/other"); // not referenced
    b.set("request.headers", headers(["x-user", "x-trace"], ["alice", "t2"])); // other key differs
    expect(shape.signature(a)).toBe(shape.signature(b));
    const c = request();
    c.setString("source.principal", "bob");
    expect(shape.signature(a)).not.toBe(shape.signature(c));
    const d = request();
    d.set("request.headers", headers(["x-user"], ["mallory"]));
    expect(shape.signature(a)).not.toBe(shape.signature(d));
    expect(shape.signature(a, "quota-a")).not.toBe(shape.signature(a, "quota-b"));
  });

  it("is typed: Int64 42, Double 42, String \"42\" and Timestamp 42 s differ", () => {
    const shape = new ReferencedShape([ref("v", Condition.Exact)]);
    const values: AttributeValue[] = [
      AttributeValue.ofInt64(42),
      AttributeValue.ofDouble(42),
      AttributeValue.ofString("42"),
      AttributeValue.ofSecondsNanos(ValueKind.Timestamp, 42, 0),
      AttributeValue.ofSecondsNanos(ValueKind.Duration, 42, 0),
      AttributeValue.ofSecondsNanos(ValueKind.Duration, 42, 1),
      AttributeValue.ofBool(true),
      AttributeValue.ofBytes(Uint8Array.wrap(String.UTF8.encode("42"))),
    ];
    const sigs = new Array<u64>();
    for (let i = 0; i < values.length; i++) {
      const b = new AttributeBag();
      b.set("v", values[i]);
      sigs.push(shape.signature(b));
    }
    for (let i = 0; i < sigs.length; i++) {
      for (let j = i + 1; j < sigs.length; j++) expect(sigs[i]).not.toBe(sigs[j], i.toString() + "/" + j.toString());
    }
  });

  it("whole-map EXACT ignores entry order but not entry values", () => {
    const shape = new ReferencedShape([ref("request.headers", Condition.Exact)]);
    const a = new AttributeBag();
    a.set("request.headers", headers(["a", "b"], ["1", "2"]));
    const b = new AttributeBag();
    b.set("request.headers", headers(["b", "a"], ["2", "1"]));
    const c = new AttributeBag();
    c.set("request.headers", headers(["a", "b"], ["2", "1"]));
    expect(shape.signature(a)).toBe(shape.signature(b));
    expect(shape.sameValues(b, shape.capture(a))).toBe(true);
    expect(shape.signature(a)).not.toBe(shape.signature(c));
    expect(shape.sameValues(c, shape.capture(a))).toBe(false);
  });

  it("sameValues confirms against captured copies", () => {
    const shape = new ReferencedShape([ref("source.principal", Condition.Exact), ref("request.headers", Condition.Exact, "x-user")]);
    const a = request();
    const captured = shape.capture(a);
    expect(shape.sameValues(request(), captured)).toBe(true);
    const b = request();
    b.setString("source.principal", "bob");
    expect(shape.sameValues(b, captured)).toBe(false);
  });
});

describe("ReferencedShape.key", () => {
  it("is canonical: order and duplicates do not matter", () => {
    const a = new ReferencedShape([ref("b", Condition.Exact), ref("a", Condition.Absence), ref("h", Condition.Exact, "k")]);
    const b = new ReferencedShape([ref("h", Condition.Exact, "k"), ref("a", Condition.Absence), ref("b", Condition.Exact), ref("b", Condition.Exact)]);
    expect(a.key()).toBe(b.key());
    expect(b.exact.length).toBe(2);
  });

  it("distinguishes condition, map key, whole map and names that imitate separators", () => {
    const keys: string[] = [
      new ReferencedShape([ref("a", Condition.Exact)]).key(),
      new ReferencedShape([ref("a", Condition.Absence)]).key(),
      new ReferencedShape([ref("a", Condition.Exact, "")]).key(),
      new ReferencedShape([ref("a", Condition.Exact, "k")]).key(),
      new ReferencedShape([ref("a+1:k", Condition.Exact)]).key(),
      new ReferencedShape([ref("a", Condition.Exact), ref("b", Condition.Exact)]).key(),
      new ReferencedShape([ref("a", Condition.Exact), ref("a", Condition.Regex)]).key(),
    ];
    for (let i = 0; i < keys.length; i++) {
      for (let j = i + 1; j < keys.length; j++) expect(keys[i]).not.toBe(keys[j], keys[i] + " vs " + keys[j]);
    }
  });
});
