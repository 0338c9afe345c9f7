// Quota rules and StringMatch (hub-client §5, upstream
// src/istio/quota_config/config_parser_impl.cc): every rule is evaluated; a
// rule holds when its match list is empty or any AttributeMatch holds; an
// AttributeMatch holds when all its clauses hold; clauses need a string value.
import { AttributeMatch, Clause, QuotaCharge, quotaCharges, QuotaRule } from "../../assembly/quota";
import { MatchKind, StringMatch } from "../../assembly/string_match";
import { Regex } from "../../assembly/regex/index";
import { AttributeBag } from "../../assembly/attributes/bag";
import { AttributeValue, StringMap } from "../../assembly/attributes/value";

function exact(s: string): StringMatch {
  return new StringMatch(MatchKind.Exact, s, null);
}
function prefix(s: string): StringMatch {
  return new StringMatch(MatchKind.Prefix, s, null);
}
function regex(s: string): StringMatch {
  const r = Regex.compile(s);
  expect(r.error).toBe("", s);
  return new StringMatch(MatchKind.Regex, s, r.regex);
}

function match(keys: string[], matches: StringMatch[]): AttributeMatch {
  const m = new AttributeMatch();
  for (let i = 0; i < keys.length; i++) m.clauses.push(new Clause(keys[i], matches[i]));
  return m;
}

function rule(matches: AttributeMatch[], quotas: string[]): QuotaRule {
  const r = new QuotaRule();
  r.matches = matches;
  for (let i = 0; i < quotas.length; i++) r.quotas.push(new QuotaCharge(quotas[i], <i64>(i + 1)));
  return r;
}

function bag(): AttributeBag {
  const h = new StringMap();
  h.set("x-user", "alice");
  const b = new AttributeBag();
  b.setString("request.path", "/books/1");
  b.setString("request.method", "GET");
  b.setString("empty", "");
  b.set("request.size", AttributeValue.ofInt64(10));
  b.set("source.ip", AttributeValue.ofBytes(new Uint8Array(4)));
  b.set("request.headers", AttributeValue.ofMap(h));
  return b;
}

function names(out: QuotaCharge[]): string {
  const parts = new Array<string>();
  for (let i = 0; i < out.length; i++) parts.push(out[i].quota + "=" + out[i].charge.toString());
  return parts.join(",");
}

describe("StringMatch", () => {
  it("exact is byte equality, case-sensitive", () => {
    expect(exact("GET").matches("GET")).toBe(true);
    expect(exact("").matches("")).toBe(true);
    expect(exact("GET").matches("get")).toBe(false);
    expect(exact("GET").matches("GETS")).toBe(false);
    expect(exact("").matches("x")).toBe(false);
  });

  it("prefix is starts-with", () => {
    expect(prefix("/books").matches("/books/1")).toBe(true);
    expect(prefix("/books").matches("/books")).toBe(true);
    expect(prefix("").matches("anything")).toBe(true);
    expect(prefix("/books").matches("/Books/1")).toBe(false);
    expect(prefix("/books/").matches("/books")).toBe(false);
  });

  it("regex is a whole-value match", () => {
    expect(regex("/books/[0-9]+").matches("/books/12")).toBe(true);
    expect(regex("/books/[0-9]+").matches("/books/12/x")).toBe(false);
    expect(regex("/books/[0-9]+").matches("x/books/12")).toBe(false);
    expect(regex("a|b").matches("b")).toBe(true);
    expect(regex("a|b").matches("ab")).toBe(false);
  });
});

describe("AttributeMatch", () => {
  it("holds when every clause holds (AND)", () => {
    const m = match(["request.method", "request.path"], [exact("GET"), prefix("/books")]);
    expect(m.holds(bag())).toBe(true);
    const n = match(["request.method", "request.path"], [exact("GET"), prefix("/authors")]);
    expect(n.holds(bag())).toBe(false);
  });

  it("holds for every request with no clauses", () => {
    expect(new AttributeMatch().holds(new AttributeBag())).toBe(true);
  });

  it("needs the attribute to exist as a string (or string-map entry)", () => {
    expect(match(["missing"], [prefix("")]).holds(bag())).toBe(false);
    expect(match(["request.size"], [exact("10")]).holds(bag())).toBe(false);
    expect(match(["source.ip"], [prefix("")]).holds(bag())).toBe(false);
    expect(match(["request.headers"], [prefix("")]).holds(bag())).toBe(false);
    expect(match(["empty"], [exact("")]).holds(bag())).toBe(true);
  });

  it("addresses string-map entries with name[key] (request.headers[x-user])", () => {
    expect(match(["request.headers[x-user]"], [exact("alice")]).holds(bag())).toBe(true);
    expect(match(["request.headers[x-user]"], [exact("bob")]).holds(bag())).toBe(false);
    expect(match(["request.headers[x-other]"], [prefix("")]).holds(bag())).toBe(false);
  });
});

describe("quotaCharges", () => {
  it("charges a rule with an empty match list on every request", () => {
    const out = new Array<QuotaCharge>();
    quotaCharges([rule([], ["rq"])], new AttributeBag(), out);
    expect(names(out)).toBe("rq=1");
  });

  it("charges when any one AttributeMatch holds (OR)", () => {
    const r = rule([match(["request.method"], [exact("POST")]), match(["request.path"], [regex("/books/.*")])], ["q"]);
    const out = new Array<QuotaCharge>();
    quotaCharges([r], bag(), out);
    expect(names(out)).toBe("q=1");
    const none = rule([match(["request.method"], [exact("POST")]), match(["request.path"], [exact("/")])], ["q"]);
    const out2 = new Array<QuotaCharge>();
    quotaCharges([none], bag(), out2);
    expect(out2.length).toBe(0);
  });

  it("appends in rule order, then quota order, without de-duplication", () => {
    const rules = [
      rule([], ["a", "b"]),
      rule([match(["request.method"], [exact("DELETE")])], ["never"]),
      rule([match(["request.method"], [exact("GET")])], ["a"]),
    ];
    const out = new Array<QuotaCharge>();
    quotaCharges(rules, bag(), out);
    expect(names(out)).toBe("a=1,b=2,a=1");
  });

  it("appends to what is already in out", () => {
    const out = [new QuotaCharge("earlier", 5)];
    quotaCharges([rule([], ["x"])], bag(), out);
    expect(names(out)).toBe("earlier=5,x=1");
  });

  it("charges nothing with no rules", () => {
    const out = new Array<QuotaCharge>();
    quotaCharges([], bag(), out);
    expect(out.length).toBe(0);
  });
});
