// Variable bindings of a matched template (research note hub-client §3.9 and
// upstream's UrlUnescapeString: one-segment variables fully decoded,
// multi-segment and `**` variables decode all but reserved characters).
import { parseUriTemplate, PathMatcher, TemplateMatch } from "../../assembly/template";

// "name=value name=value" in template order, or "no match".
function bound(template: string, method: string, path: string): string {
  const matcher = new PathMatcher();
  const parsed = parseUriTemplate(template);
  expect(parsed.error).toBe("", template);
  expect(matcher.insert("GET", parsed.template!, 0)).toBe(true, template);
  return render(matcher.bindings(method, path));
}

function render(match: TemplateMatch | null): string {
  if (match === null) return "no match";
  const parts = new Array<string>();
  for (let i = 0; i < match.names.length; i++) parts.push(match.names[i] + "=" + match.values[i]);
  return parts.join(" ");
}

class Row {
  constructor(public template: string, public path: string, public expected: string) {}
}

function expectRows(rows: Row[]): void {
  for (let i = 0; i < rows.length; i++) {
    const row = rows[i];
    expect(bound(row.template, "GET", row.path)).toBe(row.expected, row.template + " " + row.path);
  }
}

describe("PathMatcher.bindings", () => {
  it("binds each variable to the segments it covers, in template order", () => {
    expectRows([
      new Row("/shelves/{shelf}/books/{book}", "/shelves/s1/books/b2", "shelf=s1 book=b2"),
      new Row("/shelves/{shelf}/books/{book}", "/shelves/s1/books/b2?view=full", "shelf=s1 book=b2"),
      new Row("/a/{a.b.c}", "/a/x", "a.b.c=x"),
      new Row("/a/{b=c/*}", "/a/c/d", "b=c/d"),
      new Row("/a/{b=c/*/d}", "/a/c/x/d", "b=c/x/d"),
      new Row("/a/{b=**}", "/a/x/y/z", "b=x/y/z"),
      new Row("/a/{b=c/**}/d/e", "/a/c/1/2/d/e", "b=c/1/2"),
      new Row("/a/{b=c/**/d}/e", "/a/c/1/2/d/e", "b=c/1/2/d"),
      new Row("/a/{b=c/**/d}/e:verb", "/a/c/1/2/d/e:verb", "b=c/1/2/d"),
      new Row("/{x.y.z=*/a/b}/c", "/q/a/b/c", "x.y.z=q/a/b"),
      new Row("/{x=a/**/b}/c/d:custom", "/a/1/2/b/c/d:custom", "x=a/1/2/b"),
      new Row("/{x}:verb", "/hello:verb", "x=hello"),
      new Row("/{x=**}:myverb", "/p/q:myverb", "x=p/q"),
      // a verb template also matches the plain path, binding the same way
      new Row("/a/{x}:go", "/a/1/go", "x=1"),
      // variables after `**` are counted from the end (upstream misplaced them)
      new Row("/{x=**}/{y=c}", "/p/q/c", "x=p/q y=c"),
      new Row("/a/{x=**}/b/{y=c}/d", "/a/1/b/2/b/c/d", "x=1/b/2 y=c"),
      new Row("/{first}/{rest=**}", "/1/2/3", "first=1 rest=2/3"),
      new Row("/a/{id}/{id}", "/a/1/2", "id=1 id=2"),
      new Row("/a/b", "/a/b", ""),
      new Row("/a/{x}", "/b/x", "no match"),
    ]);
  });

  it("binds a `**` that matched zero segments to the empty string", () => {
    expectRows([
      new Row("/a/{x=**}", "/a", "x="),
      new Row("/a/{x=**}", "/a/", "x="),
      new Row("/{x=**}", "/", "x="),
      new Row("/{x=**}", "", "x="),
      new Row("/{x=**}", "?q", "x="),
    ]);
  });

  it("keeps interior empty segments and drops trailing ones", () => {
    expectRows([
      new Row("/c/{x=**}", "/c/a//b", "x=a//b"),
      new Row("/c/{x=**}", "/c/a/b//", "x=a/b"),
      new Row("/c/{x}/v", "/c//v", "x="),
    ]);
  });

  it("fully decodes a one-segment variable", () => {
    expectRows([
      new Row("/f/{name}", "/f/a%2Fb", "name=a/b"),
      new Row("/f/{name}", "/f/a%2fb", "name=a/b"),
      new Row("/f/{name}", "/f/%3F%23%25%20%41", "name=?#% A"),
      new Row("/f/{name}", "/f/caf%C3%A9", "name=café"),
      new Row("/f/{name}", "/f/%E6%97%A5%E6%9C%AC", "name=日本"),
      new Row("/f/{name}", "/f/%F0%9F%98%80", "name=😀"),
      new Row("/f/{name}", "/f/café", "name=café"),
      new Row("/f/{name=*}", "/f/%2F", "name=/"),
      new Row("/f/{name}:go", "/f/a%3Ab:go", "name=a:b"),
    ]);
  });

  it("decodes all but reserved characters of multi-segment and `**` variables", () => {
    expectRows([
      new Row("/f/{path=**}", "/f/a%2Fb/c", "path=a%2Fb/c"),
      new Row("/f/{path=**}", "/f/a%2Fb", "path=a%2Fb"),
      new Row("/f/{path=**}", "/f/%41%5a%61%7A%30%39%2D%2E%5F%7E", "path=AZaz09-._~"),
      // Reserved (RFC 6570 gen-delims and sub-delims) stay encoded; `%25` and `%20` are not reserved.
      new Row("/f/{path=**}", "/f/%3F%23%25%20%2C", "path=%3F%23% %2C"),
      new Row("/f/{path=**}", "/f/%21%24%26%27%28%29%2A%2B%3A%3B%3D%40%5B%5D", "path=%21%24%26%27%28%29%2A%2B%3A%3B%3D%40%5B%5D"),
      new Row("/f/{path=**}", "/f/%22%3C%3E%5C%5E%60%7B%7C%7D", "path=\"<>\\^`{|}"),
      new Row("/f/{path=**}", "/f/caf%C3%A9", "path=café"),
      new Row("/f/{path=x/*}", "/f/x/a%2Fb%41", "path=x/a%2FbA"),
      new Row("/v1/{name=shelves/*/books/*}", "/v1/shelves/my%20shelf/books/a%2Fb", "name=shelves/my shelf/books/a%2Fb"),
    ]);
  });

  it("leaves malformed and non-UTF-8 escapes as they are", () => {
    expectRows([
      new Row("/f/{name}", "/f/%", "name=%"),
      new Row("/f/{name}", "/f/a%2", "name=a%2"),
      new Row("/f/{name}", "/f/%zz%2", "name=%zz%2"),
      new Row("/f/{name}", "/f/%%41", "name=%A"),
      new Row("/f/{name}", "/f/%FF", "name=%FF"),
      new Row("/f/{name}", "/f/%C3", "name=%C3"),
      new Row("/f/{name}", "/f/%C3%28", "name=%C3("),
      new Row("/f/{name}", "/f/%C0%AF", "name=%C0%AF"),
      new Row("/f/{name}", "/f/%ED%A0%80", "name=%ED%A0%80"),
      new Row("/f/{name}", "/f/%F4%90%80%80", "name=%F4%90%80%80"),
      new Row("/f/{name}", "/f/%E6%97", "name=%E6%97"),
      new Row("/f/{path=**}", "/f/%4/%g1", "path=%4/%g1"),
    ]);
  });

  it("reports the matched pattern index, and null without a match", () => {
    const matcher = new PathMatcher();
    matcher.insert("GET", parseUriTemplate("/a/{x}").template!, 3);
    matcher.insert("*", parseUriTemplate("/a/{y=**}").template!, 9);
    const get = matcher.bindings("GET", "/a/1")!;
    expect(get.patternIndex).toBe(3);
    expect(render(get)).toBe("x=1");
    const post = matcher.bindings("POST", "/a/1")!;
    expect(post.patternIndex).toBe(9);
    expect(render(post)).toBe("y=1");
    expect(matcher.bindings("GET", "/b")).toBeNull();
    // lookup and bindings agree
    expect(matcher.lookup("POST", "/a/1/2")).toBe(9);
    expect(render(matcher.bindings("POST", "/a/1/2"))).toBe("y=1/2");
  });

  it("binds over very long paths", () => {
    let rest = "";
    for (let i = 0; i < 3000; i++) rest += "/s%41";
    let expected = "";
    for (let i = 0; i < 3000; i++) expected += (i > 0 ? "/" : "") + "sA";
    expect(bound("/a/{rest=**}/end", "GET", "/a" + rest + "/end")).toBe("rest=" + expected);
  });
});
