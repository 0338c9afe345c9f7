// HTTPAPISpec matching as compiled from configuration (hub-client §3.3-3.7
// and the project decisions in issue 2): template precedence, regex patterns
// seeing the query string while templates do not, methods `*`/absent = any,
// spec-level attributes only when a pattern matched, template attributes then
// every matching regex's. The engines' internals have their own specs.
import { compileConfig } from "../../assembly/config/compile";
import { CompiledApiSpec } from "../../assembly/api_spec";
import { AttributeBag } from "../../assembly/attributes/bag";

const SERVICE = "petstore.default.svc.cluster.local";

function q(s: string): string {
  return s.replaceAll("'", "\"");
}

function attr(name: string, value: string): string {
  return "'attributes':{'attributes':{'" + name + "':{'stringValue':'" + value + "'}}}";
}

// Patterns are "METHOD TEMPLATE" or "METHOD ~REGEX" ("-" = no httpMethod);
// pattern i gets attribute api.operation = "op<i>".
function specOf(patterns: string[], specAttributes: string = ""): CompiledApiSpec {
  const parts = new Array<string>();
  for (let i = 0; i < patterns.length; i++) {
    const sp = patterns[i].indexOf(" ");
    const method = patterns[i].substring(0, sp);
    const rest = patterns[i].substring(sp + 1);
    let p = "{" + attr("api.operation", "op" + i.toString());
    if (method != "-") p += ",'httpMethod':'" + method + "'";
    if (rest.startsWith("~")) p += ",'regex':'" + rest.substring(1).replaceAll("\\", "\\\\") + "'";
    else p += ",'uriTemplate':'" + rest + "'";
    parts.push(p + "}");
  }
  const spec = "{" + (specAttributes.length > 0 ? specAttributes + "," : "") + "'patterns':[" + parts.join(",") + "]}";
  const text = "{'resources':[" +
    "{'kind':'HTTPAPISpec','metadata':{'name':'s','namespace':'default'},'spec':" + spec + "}," +
    "{'kind':'HTTPAPISpecBinding','metadata':{'name':'b','namespace':'default'},'spec':{'services':[{'name':'petstore'}],'apiSpecs':[{'name':'s'}]}}]}";
  const r = compileConfig(q(text));
  expect(r.error).toBe("", text);
  return r.config!.services.get(SERVICE).apiSpec;
}

class Row {
  constructor(public method: string, public path: string, public winner: i32, public operation: string = "") {}
}

const NONE: i32 = -1;

// Expects each row's winning pattern (-1: none) and the final api.operation
// ("" = absent; defaults to op<winner>).
function expectRows(spec: CompiledApiSpec, rows: Row[]): void {
  for (let i = 0; i < rows.length; i++) {
    const row = rows[i];
    const label = row.method + " " + row.path;
    for (let b = 0; b < 2; b++) {
      const bag = new AttributeBag();
      const m = spec.apply(row.method, row.path, bag, b == 1);
      expect(m.winner).toBe(row.winner, label);
      expect(m.matched).toBe(row.winner >= 0, label);
      const op = row.operation.length > 0 ? row.operation : row.winner >= 0 ? "op" + row.winner.toString() : "";
      if (op.length == 0) expect(bag.has("api.operation")).toBe(false, label);
      else expect(bag.getString("api.operation")).toBe(op, label);
    }
  }
}

describe("CompiledApiSpec templates", () => {
  it("prefers literal over * over ** at the first divergence (upstream path_matcher_test)", () => {
    const spec = specOf(["GET /c/*/d/**", "GET /c/*/d/e", "GET /c/f/d/e", "GET /c/**"]);
    expectRows(spec, [
      new Row("GET", "/c/f/d/e", 2),
      new Row("GET", "/c/x/d/e", 1),
      new Row("GET", "/c/x/d/e/f", 0),
      new Row("GET", "/c/x/y", 3),
      new Row("GET", "/c", 3),
      new Row("GET", "/d/x", NONE),
      new Row("POST", "/c/f/d/e", NONE),
    ]);
  });

  it("ignores the query string", () => {
    expectRows(specOf(["GET /pets/{id}"]), [
      new Row("GET", "/pets/1?view=full", 0),
      new Row("GET", "/pets/1?", 0),
      new Row("GET", "/pets?id=1", NONE),
      new Row("GET", "/pets/1/x?y", NONE),
    ]);
  });

  it("matches any method with httpMethod '*' or absent, after the exact method", () => {
    const spec = specOf(["GET /a", "* /a/b", "- /c", "POST /a/b"]);
    expectRows(spec, [
      new Row("GET", "/a", 0),
      new Row("POST", "/a", NONE),
      new Row("DELETE", "/a/b", 1),
      new Row("POST", "/a/b", 3),
      new Row("PATCH", "/c", 2),
      new Row("get", "/a", NONE),
    ]);
  });

  it("backtracks to another branch when the method does not fit (upstream)", () => {
    expectRows(specOf(["GET /x/y", "POST /x/*"]), [
      new Row("POST", "/x/y", 1),
      new Row("GET", "/x/y", 0),
      new Row("GET", "/x/z", NONE),
    ]);
  });

  it("matches no prefix: the template must consume the whole path", () => {
    expectRows(specOf(["GET /a/b"]), [
      new Row("GET", "/a/b/c", NONE),
      new Row("GET", "/a", NONE),
      new Row("GET", "/a/b/", 0), // trailing empty segment dropped (upstream)
      new Row("GET", "", NONE),
    ]);
  });

  it("binds variables only when asked, percent-decoding a single-segment variable", () => {
    const spec = specOf(["GET /shelves/{shelf}/books/{book.id=**}"]);
    const bag = new AttributeBag();
    const m = spec.apply("GET", "/shelves/a%20b/books/x/y%2Fz?q=1", bag, true);
    expect(m.winner).toBe(0);
    expect(m.bindingNames).toStrictEqual(["shelf", "book.id"]);
    expect(m.bindingValues[0]).toBe("a b");
    expect(m.bindingValues[1]).toBe("x/y%2Fz");
    const without = spec.apply("GET", "/shelves/a/books/x", new AttributeBag(), false);
    expect(without.winner).toBe(0);
    expect(without.bindingNames.length).toBe(0);
  });
});

describe("CompiledApiSpec regex patterns", () => {
  it("match the whole :path including the query string (hub-client §3.6)", () => {
    expectRows(specOf(["GET ~/books/[0-9]+", "GET ~/authors/[0-9]+(\\?.*)?"]), [
      new Row("GET", "/books/12", 0),
      new Row("GET", "/books/12?x=y", NONE),
      new Row("GET", "/books/12/", NONE),
      new Row("GET", "/authors/7?sort=asc", 1),
      new Row("GET", "/authors/7", 1),
      new Row("GET", "x/books/1", NONE),
    ]);
  });

  it("compare the method by equality, with '*' or absent matching any", () => {
    expectRows(specOf(["GET ~/g/.*", "* ~/any/.*", "- ~/none/.*"]), [
      new Row("GET", "/g/1", 0),
      new Row("POST", "/g/1", NONE),
      new Row("POST", "/any/1", 1),
      new Row("PUT", "/none/1", 2),
    ]);
  });

  it("all contribute, in order: the first is the winner, later ones overwrite", () => {
    expectRows(specOf(["GET ~/x/.*", "GET ~/x/y.*", "POST ~/x/yz"]), [
      new Row("GET", "/x/yz", 0, "op1"),
      new Row("GET", "/x/a", 0, "op0"),
      new Row("POST", "/x/yz", 2, "op2"),
    ]);
  });
});

describe("CompiledApiSpec templates with regexes", () => {
  it("make the template the winner; regex attributes are applied after it", () => {
    const spec = specOf(["GET ~/pets/[0-9]+", "GET /pets/{id}", "GET /pets"]);
    expectRows(spec, [
      new Row("GET", "/pets/1", 1, "op0"), // both match: template wins, regex writes last
      new Row("GET", "/pets/1?x=y", 1, "op1"), // the regex misses because of the query
      new Row("GET", "/pets/abc", 1, "op1"),
      new Row("GET", "/pets", 2, "op2"),
      new Row("GET", "/dogs", NONE),
    ]);
  });

  it("adds spec-level attributes only when some pattern matched (project decision)", () => {
    const spec = specOf(["GET /pets", "GET ~/r"], attr("api.service", "petstore"));
    const rows: string[][] = [["/pets", "petstore"], ["/r", "petstore"], ["/other", ""], ["/r?x", ""]];
    for (let i = 0; i < rows.length; i++) {
      const bag = new AttributeBag();
      spec.apply("GET", rows[i][0], bag, false);
      if (rows[i][1].length == 0) expect(bag.has("api.service")).toBe(false, rows[i][0]);
      else expect(bag.getString("api.service")).toBe(rows[i][1], rows[i][0]);
    }
  });

  it("lets pattern attributes overwrite spec-level ones of the same name", () => {
    const spec = specOf(["GET /pets"], attr("api.operation", "spec-level"));
    const bag = new AttributeBag();
    spec.apply("GET", "/pets", bag, false);
    expect(bag.getString("api.operation")).toBe("op0");
  });

  it("matches nothing for an empty spec, and leaves the bag alone", () => {
    const spec = new CompiledApiSpec();
    const bag = new AttributeBag();
    bag.setString("keep", "1");
    const m = spec.apply("GET", "/a", bag, true);
    expect(m.matched).toBe(false);
    expect(m.winner).toBe(-1);
    expect(bag.size).toBe(1);
    expect(spec.isEmpty).toBe(true);
  });

  it("handles very long paths in both engines", () => {
    let long = "";
    for (let i = 0; i < 3000; i++) long += "/s";
    const spec = specOf(["GET /s/**", "GET ~(/s)+"]);
    expectRows(spec, [new Row("GET", long, 0, "op1"), new Row("GET", long + "?q", 0, "op0"), new Row("GET", "/t" + long, NONE)]);
  });

  it("costs the same structure with many patterns: the last of 200 templates still wins", () => {
    const patterns = new Array<string>();
    for (let i = 0; i < 200; i++) patterns.push("GET /r" + i.toString() + "/{id}");
    for (let i = 0; i < 20; i++) patterns.push("POST ~/x" + i.toString() + "/[0-9]+");
    const spec = specOf(patterns);
    expectRows(spec, [
      new Row("GET", "/r199/7", 199),
      new Row("GET", "/r0/7", 0),
      new Row("POST", "/x19/42", 219),
      new Row("GET", "/r200/7", NONE),
    ]);
  });
});
