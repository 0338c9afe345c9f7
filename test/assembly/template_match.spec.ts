// Path matching, both ways. Rows named "upstream" are derived from istio/proxy
// src/istio/api_spec/path_matcher_test.cc; the others from the research note
// hub-client §3.2-3.5 and the project decisions.
import { parseUriTemplate, PathMatcher } from "../../assembly/template";

// Pattern i of `patterns` is registered with index i; each is "METHOD TEMPLATE".
function matcherOf(patterns: string[]): PathMatcher {
  const matcher = new PathMatcher();
  for (let i = 0; i < patterns.length; i++) {
    expect(register(matcher, patterns[i], i)).toBe(true, patterns[i]);
  }
  return matcher;
}

function register(matcher: PathMatcher, pattern: string, index: i32): bool {
  const space = pattern.indexOf(" ");
  const parsed = parseUriTemplate(pattern.substring(space + 1));
  expect(parsed.error).toBe("", pattern);
  return matcher.insert(pattern.substring(0, space), parsed.template!, index);
}

class Row {
  constructor(public method: string, public path: string, public expected: i32) {}
}

// Expects each row's pattern index (-1: no match).
function expectRows(matcher: PathMatcher, rows: Row[]): void {
  for (let i = 0; i < rows.length; i++) {
    const row = rows[i];
    expect(matcher.lookup(row.method, row.path)).toBe(row.expected, row.method + " " + row.path);
  }
}

const NONE: i32 = -1;

describe("PathMatcher wildcards", () => {
  it("matches the root with /** (upstream WildCardMatchesRoot)", () => {
    expectRows(matcherOf(["GET /**"]), [
      new Row("GET", "/", 0),
      new Row("GET", "/a", 0),
      new Row("GET", "/a/", 0),
      new Row("GET", "/a/b/c", 0),
      new Row("GET", "", 0),
      new Row("POST", "/a", NONE),
    ]);
  });

  it("* takes one segment, ** the rest (upstream WildCardMatches)", () => {
    expectRows(matcherOf(["GET /a/**", "GET /b/*", "GET /c/*/d/**", "GET /c/*/d/e", "GET /c/f/d/e"]), [
      new Row("GET", "/a/b", 0),
      new Row("GET", "/a/b/c", 0),
      new Row("GET", "/b/c", 1),
      new Row("GET", "/b/c/d", NONE),
      new Row("GET", "/b", NONE),
      // The first character is dropped whatever it is: "b/c/d" is "/c/d".
      new Row("GET", "b/c/d", NONE),
      new Row("GET", "/c/u/d/v", 2),
      new Row("GET", "/c/v/d/w/x", 2),
      new Row("GET", "/c/x/y/d/z", NONE),
      new Row("GET", "/c//v/d/w/x", NONE),
      // precedence at the first divergence: literal, then *, then **
      new Row("GET", "/c/x/d/e", 3),
      new Row("GET", "/c/f/d/e", 4),
      new Row("GET", "/c/f/d/e/f", 2),
      new Row("GET", "/c/f/d", 2),
    ]);
  });

  it("a trailing ** may match zero segments, one in the middle may not", () => {
    expectRows(matcherOf(["GET /a/**", "GET /q/{v=**}/end", "GET /m/**/b/c", "GET /z/{x}/**"]), [
      new Row("GET", "/a", 0),
      new Row("GET", "/a/", 0),
      new Row("GET", "/a//", 0),
      new Row("GET", "/q/end", NONE),
      new Row("GET", "/q/x/end", 1),
      new Row("GET", "/q/x/y/end", 1),
      new Row("GET", "/q/end/end", 1),
      new Row("GET", "/q/x/end/y", NONE),
      new Row("GET", "/m/b/c", NONE),
      new Row("GET", "/m/x/b/c", 2),
      // the ** swallows a first b/c whose tail did not end the path
      new Row("GET", "/m/x/b/c/b/c", 2),
      new Row("GET", "/m/x/b", NONE),
      new Row("GET", "/m/x/b/c/d", NONE),
      new Row("GET", "/z/1", 3),
      new Row("GET", "/z/1/2/3", 3),
      new Row("GET", "/z", NONE),
    ]);
  });

  it("prefers literal over * over ** at the first divergence, backtracking when a branch fails", () => {
    expectRows(matcherOf(["GET /p/lit/x", "GET /p/*/y", "GET /p/**"]), [
      new Row("GET", "/p/lit/x", 0),
      new Row("GET", "/p/lit/y", 1),
      new Row("GET", "/p/lit/z", 2),
      new Row("GET", "/p/other/y", 1),
      new Row("GET", "/p/other/x", 2),
      new Row("GET", "/p", 2),
    ]);
  });
});

describe("PathMatcher methods", () => {
  it("* registers any method (upstream WildCardMethodMatches)", () => {
    const matcher = matcherOf(["* /a/**", "* /b/*"]);
    const methods = ["GET", "POST", "DELETE", "PATCH", "PUT", "OPTIONS", "CUSTOM"];
    for (let i = 0; i < methods.length; i++) {
      expectRows(matcher, [
        new Row(methods[i], "/a/b", 0),
        new Row(methods[i], "/a/b/c", 0),
        new Row(methods[i], "/b/c", 1),
        new Row(methods[i], "/c", NONE),
      ]);
    }
  });

  it("tries the exact method before * at the same node", () => {
    expectRows(matcherOf(["* /a", "GET /a", "POST /a"]), [
      new Row("GET", "/a", 1),
      new Row("POST", "/a", 2),
      new Row("PUT", "/a", 0),
    ]);
  });

  it("compares methods case-sensitively (upstream DifferentHttpMethod)", () => {
    expectRows(matcherOf(["GET /a/b"]), [
      new Row("GET", "/a/b", 0),
      new Row("POST", "/a/b", NONE),
      new Row("get", "/a/b", NONE),
      new Row("", "/a/b", NONE),
    ]);
  });

  it("backtracks to the next branch when the method does not fit", () => {
    expectRows(matcherOf(["GET /x/y", "POST /x/*", "PUT /x/**", "DELETE /x/y/z", "* /x/{a}/z"]), [
      new Row("GET", "/x/y", 0),
      new Row("POST", "/x/y", 1),
      new Row("PUT", "/x/y", 2),
      new Row("DELETE", "/x/y", NONE),
      new Row("DELETE", "/x/y/z", 3),
      new Row("GET", "/x/y/z", 4),
      new Row("PUT", "/x/q/r", 2),
    ]);
  });

  it("lets the branch order win over method exactness", () => {
    // The literal branch is taken as soon as a pattern there fits, even a
    // `*` one, before the `*` branch is looked at.
    expectRows(matcherOf(["* /x/y", "GET /x/*"]), [
      new Row("GET", "/x/y", 0),
      new Row("GET", "/x/z", 1),
      new Row("POST", "/x/z", NONE),
    ]);
  });
});

describe("PathMatcher verbs", () => {
  it("matches registered verbs (upstream CustomVerbMatches)", () => {
    expectRows(
      matcherOf(["GET /some/const:verb", "GET /some/*:verb", "GET /some/*/foo:verb", "GET /other/**:verb", "GET /other/**/const:verb"]),
      [
        new Row("GET", "/some/const:verb", 0),
        new Row("GET", "/some/other:verb", 1),
        new Row("GET", "/some/other:verb/", NONE),
        new Row("GET", "/some/bar/foo:verb", 2),
        new Row("GET", "/some/foo1/foo2/foo:verb", NONE),
        new Row("GET", "/some/foo/bar:verb", NONE),
        new Row("GET", "/other/bar/foo:verb", 3),
        new Row("GET", "/other/bar/foo/const:verb", 4),
        // the verb is stored as a last segment, so the plain path matches too
        new Row("GET", "/some/const/verb", 0),
        new Row("GET", "/some/other/verb", 1),
        new Row("GET", "/some/other:verb?x=1", 1),
        new Row("GET", "/some/other:verbx", NONE),
        new Row("GET", "/some/other:VERB", NONE),
      ],
    );
  });

  it("splits at the last colon only (upstream CustomVerbMatch2)", () => {
    expectRows(matcherOf(["GET /*/*:verb"]), [new Row("GET", "/some:verb/const:verb", 0)]);
  });

  it("keeps an unregistered verb in the segment (upstream CustomVerbMatch3)", () => {
    expectRows(matcherOf(["GET /foo/*"]), [
      new Row("GET", "/foo/other:verb", 0),
      new Row("GET", "/foo/other:", 0),
    ]);
  });

  it("ignores a colon before the last slash (upstream CustomVerbMatch4)", () => {
    expectRows(matcherOf(["GET /foo/*/hello", "GET /foo/*:hi"]), [
      new Row("GET", "/foo/other:verb/hello", 0),
      new Row("GET", "/foo/other:hi/hello", 0),
      new Row("GET", "/foo/other:hi", 1),
    ]);
  });

  it("applies a verb of any registered template to every path", () => {
    // `go` is registered by pattern 1, so `/a/x:go` has segments a, x, go.
    expectRows(matcherOf(["GET /a/*", "GET /b:go", "GET /a/*/*"]), [
      new Row("GET", "/a/x:go", 2),
      new Row("GET", "/a/x:stop", 0),
      new Row("GET", "/b:go", 1),
      new Row("GET", "/b/go", 1),
    ]);
  });

  it("does not treat a colon as a verb when the path has no slash", () => {
    // "x:go" has no slash: the first character is dropped and ":go" stays one
    // segment.
    expectRows(matcherOf(["GET /*:go", "GET /*"]), [
      new Row("GET", "x:go", 1),
      new Row("GET", "/x:go", 0),
    ]);
  });

  it("does not register the verb of a rejected duplicate", () => {
    const matcher = matcherOf(["GET /v/go", "GET /w/*"]);
    expect(register(matcher, "GET /v:go", 2)).toBe(false);
    expectRows(matcher, [new Row("GET", "/w/x:go", 1)]);
  });
});

describe("PathMatcher path normalization", () => {
  it("ignores the query string (upstream LookupSimplePaths)", () => {
    expectRows(
      matcherOf([
        "GET /prefix/middle/suffix",
        "GET /prefix/middle/othersuffix",
        "GET /prefix/othermiddle/suffix",
        "GET /otherprefix/middle/suffix",
        "GET /otherprefix/suffix",
      ]),
      [
        new Row("GET", "/prefix/not/a/path", NONE),
        new Row("GET", "/prefix/middle", NONE),
        new Row("GET", "/prefix/not/othermiddle", NONE),
        new Row("GET", "/otherprefix/suffix/othermiddle", NONE),
        new Row("GET", "/prefix/middle/suffix", 0),
        new Row("GET", "/prefix/middle/othersuffix", 1),
        new Row("GET", "/prefix/othermiddle/suffix", 2),
        new Row("GET", "/otherprefix/middle/suffix", 3),
        new Row("GET", "/otherprefix/suffix", 4),
        new Row("GET", "/otherprefix/suffix?foo=bar", 4),
        new Row("GET", "/otherprefix/suffix?", 4),
        new Row("GET", "/otherprefix/suffix/?a=/b/c", 4),
        new Row("GET", "/otherprefix?/suffix", NONE),
      ],
    );
  });

  it("rejects partial matches (upstream RejectPartialMatches, over- and underspecified paths)", () => {
    expectRows(matcherOf(["GET /prefix/middle/suffix", "GET /prefix/middle", "GET /prefix"]), [
      new Row("GET", "/prefix/middle/suffix", 0),
      new Row("GET", "/prefix/middle", 1),
      new Row("GET", "/prefix", 2),
      new Row("GET", "/prefix/middle/suffix/other", NONE),
      new Row("GET", "/prefix/middle/other", NONE),
      new Row("GET", "/prefix/other", NONE),
      new Row("GET", "/other", NONE),
      new Row("GET", "/", NONE),
    ]);
  });

  it("drops trailing empty segments and keeps interior ones", () => {
    expectRows(matcherOf(["GET /a/b", "GET /c/*/v", "GET /c/v", "GET /e/*/*/v"]), [
      new Row("GET", "/a/b/", 0),
      new Row("GET", "/a/b//", 0),
      new Row("GET", "/a/b///?x", 0),
      new Row("GET", "/a//b", NONE),
      new Row("GET", "//a/b", NONE),
      // the interior empty segment is a segment, which `*` matches
      new Row("GET", "/c//v", 1),
      new Row("GET", "/c/v", 2),
      new Row("GET", "/e//x/v", 3),
      new Row("GET", "/e///v", 3),
    ]);
  });

  it("matches the empty path like the root", () => {
    expectRows(matcherOf(["GET /a"]), [new Row("GET", "", NONE), new Row("GET", "/", NONE), new Row("GET", "?", NONE)]);
    expectRows(matcherOf(["GET /**"]), [new Row("GET", "", 0), new Row("GET", "?a=b", 0)]);
  });

  it("returns -1 from an empty matcher (upstream LookupReturnsNullIfMatcherEmpty)", () => {
    expectRows(new PathMatcher(), [new Row("GET", "a/b/blue/foo", NONE), new Row("GET", "/", NONE), new Row("GET", "", NONE)]);
  });

  it("compares raw code units: no percent-decoding, no case folding", () => {
    expectRows(matcherOf(["GET /a%2Fb", "GET /files/*", "GET /Case", "GET /caf%C3%A9", "GET /café"]), [
      new Row("GET", "/a%2Fb", 0),
      new Row("GET", "/a/b", NONE),
      new Row("GET", "/a%2fb", NONE),
      new Row("GET", "/files/a%2Fb", 1),
      new Row("GET", "/files/a/b", NONE),
      new Row("GET", "/Case", 2),
      new Row("GET", "/case", NONE),
      new Row("GET", "/CASE", NONE),
      new Row("GET", "/caf%C3%A9", 3),
      new Row("GET", "/café", 4),
      new Row("GET", "/cafe", NONE),
      new Row("GET", "/files/x#frag", 1),
    ]);
  });

  it("matches a request segment that spells a wildcard only through the wildcard", () => {
    expectRows(matcherOf(["GET /a/*", "GET /b/**"]), [
      new Row("GET", "/a/*", 0),
      new Row("GET", "/a/**", 0),
      new Row("GET", "/b/*/x", 1),
    ]);
  });
});

describe("PathMatcher duplicates", () => {
  it("keeps the first registration of a path (upstream ReplacevoidForPath)", () => {
    const matcher = matcherOf(["GET /foo/bar"]);
    expect(register(matcher, "GET /foo/bar", 1)).toBe(false);
    expectRows(matcher, [new Row("GET", "/foo/bar", 0)]);
  });

  it("treats variables as their wildcards (upstream AllowDuplicate)", () => {
    const matcher = matcherOf(["GET /a/{id}"]);
    expect(register(matcher, "GET /a/{name}", 1)).toBe(false);
    expect(register(matcher, "GET /a/*", 2)).toBe(false);
    expect(register(matcher, "GET /a/{x=*}", 3)).toBe(false);
    expectRows(matcher, [new Row("GET", "/a/x", 0)]);
  });

  it("is per method (upstream DuplicatedOptions)", () => {
    const matcher = matcherOf(["GET /a/{id}", "POST /a/{name}", "OPTIONS /a/{id}", "* /a/{any}"]);
    expect(register(matcher, "OPTIONS /a/{name}", 4)).toBe(false);
    expect(register(matcher, "* /a/*", 5)).toBe(false);
    expectRows(matcher, [
      new Row("OPTIONS", "/a/x", 2),
      new Row("GET", "/a/x", 0),
      new Row("POST", "/a/x", 1),
      new Row("PUT", "/a/x", 3),
    ]);
  });

  it("treats a verb and a last literal segment as the same shape (as upstream's trie)", () => {
    const matcher = matcherOf(["GET /a:go", "GET /{x=**}", "GET /b/{y=**}"]);
    expect(register(matcher, "GET /a/go", 3)).toBe(false);
    expect(register(matcher, "GET /**", 4)).toBe(false);
    expect(register(matcher, "GET /b/**", 5)).toBe(false);
    expect(register(matcher, "GET /b/*", 6)).toBe(true);
  });
});

describe("PathMatcher scale", () => {
  it("handles paths of thousands of segments", () => {
    const matcher = matcherOf(["GET /**", "GET /a/**/end", "GET /b/*", "GET /c/{x=**}:go"]);
    let many = "";
    for (let i = 0; i < 5000; i++) many += "/s" + (i % 7).toString();
    expectRows(matcher, [
      new Row("GET", many, 0),
      new Row("GET", "/a" + many + "/end", 1),
      new Row("GET", "/a" + many + "/end/", 1),
      new Row("GET", "/a" + many + "/end/x", 0),
      new Row("GET", "/b" + many, 0),
      new Row("GET", "/c" + many + ":go", 3),
      new Row("GET", "/c" + many + "/go", 3),
      new Row("POST", many, NONE),
    ]);
    // many empty segments
    let slashes = "/a";
    for (let i = 0; i < 3000; i++) slashes += "/";
    expectRows(matcher, [new Row("GET", slashes + "end", 1), new Row("GET", slashes, 0)]);
  });

  it("handles long literal trees", () => {
    let template = "";
    for (let i = 0; i < 1000; i++) template += "/t" + i.toString();
    const matcher = matcherOf(["GET " + template, "GET " + template + "/{x=**}/tail"]);
    expectRows(matcher, [
      new Row("GET", template, 0),
      new Row("GET", template + "/q/tail", 1),
      new Row("GET", template + "/tail", NONE),
      new Row("GET", template + "x", NONE),
    ]);
  });

  it("finds each of 500 patterns and nothing else", () => {
    const patterns = new Array<string>();
    for (let i = 0; i < 100; i++) {
      const service = "/svc" + i.toString();
      patterns.push("GET " + service + "/items");
      patterns.push("POST " + service + "/items");
      patterns.push("GET " + service + "/items/{id}");
      patterns.push("DELETE " + service + "/items/{id}/parts/{part}");
      patterns.push("* " + service + "/files/{path=**}");
    }
    const matcher = matcherOf(patterns);
    const rows = new Array<Row>();
    for (let i = 0; i < 100; i++) {
      const service = "/svc" + i.toString();
      rows.push(new Row("GET", service + "/items", 5 * i));
      rows.push(new Row("POST", service + "/items?x=" + i.toString(), 5 * i + 1));
      rows.push(new Row("GET", service + "/items/" + i.toString(), 5 * i + 2));
      rows.push(new Row("DELETE", service + "/items/1/parts/2", 5 * i + 3));
      rows.push(new Row("PATCH", service + "/files/a/b/c", 5 * i + 4));
      rows.push(new Row("PUT", service + "/items", NONE));
      rows.push(new Row("GET", service + "/items/1/parts/2", NONE));
      rows.push(new Row("GET", service + "x/items", NONE));
    }
    rows.push(new Row("GET", "/svc100/items", NONE));
    expectRows(matcher, rows);
  });

  it("tells 2000 sibling literals apart", () => {
    const patterns = new Array<string>();
    for (let i = 0; i < 2000; i++) patterns.push("GET /n/" + i.toString());
    const matcher = matcherOf(patterns);
    for (let i = 0; i < 2000; i++) {
      expect(matcher.lookup("GET", "/n/" + i.toString())).toBe(i);
    }
    expectRows(matcher, [new Row("GET", "/n/2000", NONE), new Row("GET", "/n/-1", NONE), new Row("GET", "/n", NONE)]);
  });
});
