// uriTemplate grammar, both ways. Rows named "upstream" are derived from
// istio/proxy src/istio/api_spec/http_template_test.cc (08d5354); "rfc6570"
// rows are the proto's examples, which upstream's parser rejects too.
import { parseUriTemplate, UriTemplate, SegmentKind } from "../../assembly/template";
import { template_check } from "../../assembly/embed/template_exports";

// Renders a parsed template as `segments | verb | variables`, e.g.
// `shelves/*/books/* | | shelf[1,2) book[3,4)`; `**` variables end in `**`.
function render(template: UriTemplate): string {
  const parts = new Array<string>();
  for (let i = 0; i < template.segments.length; i++) parts.push(template.segments[i].text);
  const vars = new Array<string>();
  for (let i = 0; i < template.variables.length; i++) {
    const v = template.variables[i];
    vars.push(
      v.name + "[" + v.startSegment.toString() + "," + v.endSegment.toString() + ")" + (v.hasDoubleStar ? "**" : ""),
    );
  }
  return parts.join("/") + " | " + template.verb + " | " + vars.join(" ");
}

class ValidRow {
  constructor(public text: string, public parsed: string) {}
}
class InvalidRow {
  constructor(public text: string, public error: string) {}
}

const VALID: ValidRow[] = [
  // upstream ParseTest1..16
  new ValidRow("/shelves/{shelf}/books/{book}", "shelves/*/books/* |  | shelf[1,2) book[3,4)"),
  new ValidRow("/shelves/**", "shelves/** |  | "),
  new ValidRow("/**", "** |  | "),
  new ValidRow("/a:foo", "a | foo | "),
  new ValidRow("/a/b/c:foo", "a/b/c | foo | "),
  new ValidRow("/*/**", "*/** |  | "),
  new ValidRow("/*/a/**", "*/a/** |  | "),
  new ValidRow("/a/{a.b.c}", "a/* |  | a.b.c[1,2)"),
  new ValidRow("/a/{a.b.c=*}", "a/* |  | a.b.c[1,2)"),
  new ValidRow("/a/{b=*}", "a/* |  | b[1,2)"),
  new ValidRow("/a/{b=**}", "a/** |  | b[1,2)**"),
  new ValidRow("/a/{b=c/*}", "a/c/* |  | b[1,3)"),
  new ValidRow("/a/{b=c/*/d}", "a/c/*/d |  | b[1,4)"),
  new ValidRow("/a/{b=c/**}", "a/c/** |  | b[1,3)**"),
  new ValidRow("/a/{b=c/**}/d/e", "a/c/**/d/e |  | b[1,3)**"),
  new ValidRow("/a/{b=c/**/d}/e", "a/c/**/d/e |  | b[1,4)**"),
  new ValidRow("/a/{b=c/**/d}/e:verb", "a/c/**/d/e | verb | b[1,4)**"),
  // upstream CustomVerbTests, ParseVerbTest2..4
  new ValidRow("/*:verb", "* | verb | "),
  new ValidRow("/**:verb", "** | verb | "),
  new ValidRow("/{a}:verb", "* | verb | a[0,1)"),
  new ValidRow("/a/b/*:verb", "a/b/* | verb | "),
  new ValidRow("/a/b/**:verb", "a/b/** | verb | "),
  new ValidRow("/a/b/{a}:verb", "a/b/* | verb | a[2,3)"),
  new ValidRow("/a/*:verb", "a/* | verb | "),
  new ValidRow("/a/**:verb", "a/** | verb | "),
  new ValidRow("/a/{b=*}/**:verb", "a/*/** | verb | b[1,2)"),
  // upstream MoreVariableTests, VariableAndCustomVerbTests
  new ValidRow("/{x}", "* |  | x[0,1)"),
  new ValidRow("/{x.y.z}", "* |  | x.y.z[0,1)"),
  new ValidRow("/{x=*}", "* |  | x[0,1)"),
  new ValidRow("/{x=a/*}", "a/* |  | x[0,2)"),
  new ValidRow("/{x.y.z=*/a/b}/c", "*/a/b/c |  | x.y.z[0,3)"),
  new ValidRow("/{x=**}", "** |  | x[0,1)**"),
  new ValidRow("/{x.y.z=**}", "** |  | x.y.z[0,1)**"),
  new ValidRow("/{x.y.z=a/**/b}", "a/**/b |  | x.y.z[0,3)**"),
  new ValidRow("/{x.y.z=a/**/b}/c/d", "a/**/b/c/d |  | x.y.z[0,3)**"),
  new ValidRow("/{x}:verb", "* | verb | x[0,1)"),
  new ValidRow("/{x.y.z}:verb", "* | verb | x.y.z[0,1)"),
  new ValidRow("/{x.y.z=*/*}:verb", "*/* | verb | x.y.z[0,2)"),
  new ValidRow("/{x=**}:myverb", "** | myverb | x[0,1)**"),
  new ValidRow("/{x.y.z=a/**/b}:custom", "a/**/b | custom | x.y.z[0,3)**"),
  new ValidRow("/{x.y.z=a/**/b}/c/d:custom", "a/**/b/c/d | custom | x.y.z[0,3)**"),
  // note §3.1: literals may follow `**`, also inside later variables
  new ValidRow("/a/**/b", "a/**/b |  | "),
  new ValidRow("/a/{x=**}/b/c", "a/**/b/c |  | x[1,2)**"),
  new ValidRow("/{x=**}/{y=c}", "**/c |  | x[0,1)** y[1,2)"),
  // literals are raw text: escapes, dots, `=`, `*` inside, `#`, non-ASCII
  new ValidRow("/a%2Fb/~me/v1.2", "a%2Fb/~me/v1.2 |  | "),
  new ValidRow("/a=b/c*d/e#f", "a=b/c*d/e#f |  | "),
  new ValidRow("/café/日本", "café/日本 |  | "),
  new ValidRow("/{user_id}/{V2}", "*/* |  | user_id[0,1) V2[1,2)"),
  new ValidRow("/a/{x}/{x}", "a/*/* |  | x[1,2) x[2,3)"),
];

const INVALID: InvalidRow[] = [
  // upstream ErrorTests and ParseNonVerbTest
  new InvalidRow("", "empty template at position 0"),
  new InvalidRow("/", "empty segment at position 1"),
  new InvalidRow("//", "empty segment at position 1"),
  new InvalidRow("/{}", "empty variable name at position 2"),
  new InvalidRow("/a/", "empty segment at position 3"),
  new InvalidRow("/a//b", "empty segment at position 3"),
  new InvalidRow(":verb", "missing leading '/' at position 0"),
  new InvalidRow("/:verb", "empty segment at position 1"),
  new InvalidRow("/a/:verb", "empty segment at position 3"),
  new InvalidRow(":", "missing leading '/' at position 0"),
  new InvalidRow("/:", "empty segment at position 1"),
  new InvalidRow("/*:", "empty verb at position 3"),
  new InvalidRow("/**:", "empty verb at position 4"),
  new InvalidRow("/{var}:", "empty verb at position 7"),
  new InvalidRow("/a/:", "empty segment at position 3"),
  new InvalidRow("/a/b/:", "empty segment at position 5"),
  new InvalidRow("/a/*:", "empty verb at position 5"),
  new InvalidRow("/a/b/*:", "empty verb at position 7"),
  new InvalidRow("/a/**:", "empty verb at position 6"),
  new InvalidRow("/a/b/**:", "empty verb at position 8"),
  new InvalidRow("/a/{b=*}/**:", "empty verb at position 12"),
  new InvalidRow("/a/b/{var}:", "empty verb at position 11"),
  new InvalidRow("/a/{", "unclosed '{' at position 3"),
  new InvalidRow("/a/{var", "unclosed '{' at position 3"),
  new InvalidRow("/a/{var.", "unclosed '{' at position 3"),
  new InvalidRow("/a/{var=b", "unclosed '{' at position 3"),
  new InvalidRow("/a/{x=var:verb}", "':' may only introduce the final verb at position 9"),
  new InvalidRow("a", "missing leading '/' at position 0"),
  new InvalidRow("{x}", "missing leading '/' at position 0"),
  new InvalidRow("{x=/a}", "missing leading '/' at position 0"),
  new InvalidRow("{x=/a/b}", "missing leading '/' at position 0"),
  new InvalidRow("a/b", "missing leading '/' at position 0"),
  new InvalidRow("a/b/{x}", "missing leading '/' at position 0"),
  new InvalidRow("a/{x}/b", "missing leading '/' at position 0"),
  new InvalidRow("a/{x}/b:verb", "missing leading '/' at position 0"),
  new InvalidRow("/a/{var=/b}", "empty segment at position 8"),
  new InvalidRow("/{var=a/{nested=b}}", "nested variable at position 8"),
  new InvalidRow("/a{x}", "a variable must occupy a whole segment at position 2"),
  new InvalidRow("/{x}a", "a variable must occupy a whole segment at position 4"),
  new InvalidRow("/a{x}b", "a variable must occupy a whole segment at position 2"),
  new InvalidRow("/{x}a{y}", "a variable must occupy a whole segment at position 4"),
  new InvalidRow("/a/b{x}", "a variable must occupy a whole segment at position 4"),
  new InvalidRow("/a/{x}b", "a variable must occupy a whole segment at position 6"),
  new InvalidRow("/a/b{x}c", "a variable must occupy a whole segment at position 4"),
  new InvalidRow("/a/{x}b{y}", "a variable must occupy a whole segment at position 6"),
  new InvalidRow("/a/b{x}/s", "a variable must occupy a whole segment at position 4"),
  new InvalidRow("/a/{x}b/s", "a variable must occupy a whole segment at position 6"),
  new InvalidRow("/a/b{x}c/s", "a variable must occupy a whole segment at position 4"),
  new InvalidRow("/a/{x}b{y}/s", "a variable must occupy a whole segment at position 6"),
  new InvalidRow("/a/{b}{c}", "a variable must occupy a whole segment at position 6"),
  // upstream path_matcher_test InvalidTemplates: only literals after `**`
  new InvalidRow("/a{x=b/**}/{y=*}", "a variable must occupy a whole segment at position 2"),
  new InvalidRow("/a/**/*", "only literal segments may follow '**' at position 6"),
  new InvalidRow("/a/**/foo/*", "only literal segments may follow '**' at position 10"),
  new InvalidRow("/a/**/**", "only literal segments may follow '**' at position 6"),
  new InvalidRow("/a/**/foo/**", "only literal segments may follow '**' at position 10"),
  new InvalidRow("/{x=b/**}/{y=*}", "only literal segments may follow '**' at position 13"),
  new InvalidRow("/{x=b/**}/{y=**}", "only literal segments may follow '**' at position 13"),
  new InvalidRow("/a/**/{y}", "only literal segments may follow '**' at position 6"),
  new InvalidRow("/{x=**/*}", "only literal segments may follow '**' at position 7"),
  // `:` only before the final verb; the verb ends the template
  new InvalidRow("/a:b:c", "':' may only introduce the final verb at position 4"),
  new InvalidRow("/a:b/c", "the verb must end the template at position 4"),
  new InvalidRow("/a:", "empty verb at position 3"),
  new InvalidRow("/a:*", "the verb must be a literal, not a wildcard at position 3"),
  new InvalidRow("/a:{x}", "the verb must be a literal, not a variable at position 3"),
  // braces and wildcards
  new InvalidRow("/}", "unbalanced '}' at position 1"),
  new InvalidRow("/a}", "unbalanced '}' at position 2"),
  new InvalidRow("/a/{x}}", "unbalanced '}' at position 6"),
  new InvalidRow("/a:}", "unbalanced '}' at position 3"),
  new InvalidRow("/a:b}", "the verb must end the template at position 4"),
  new InvalidRow("/{=a}", "empty variable name at position 2"),
  new InvalidRow("/{a.}", "empty field name at position 4"),
  new InvalidRow("/{a..b}", "empty field name at position 4"),
  new InvalidRow("/{.a}", "empty field name at position 2"),
  new InvalidRow("/{a=}", "empty segment at position 4"),
  new InvalidRow("/{a=b/}", "empty segment at position 6"),
  new InvalidRow("/*a", "a wildcard must occupy a whole segment at position 2"),
  new InvalidRow("/***", "a wildcard must occupy a whole segment at position 3"),
  new InvalidRow("/{x=*a}", "a wildcard must occupy a whole segment at position 5"),
  new InvalidRow("/a?b", "'?' can never match (the query string is not part of the matched path) at position 2"),
  new InvalidRow("/a/b?x=1", "'?' can never match (the query string is not part of the matched path) at position 4"),
  // rfc6570: the proto's examples and other expression forms
  new InvalidRow("/dictionary/{term:1}/{term}", "invalid character ':' in variable name at position 17"),
  new InvalidRow("/search{?q*,lang}", "a variable must occupy a whole segment at position 7"),
  new InvalidRow("/{?q}", "invalid character '?' in variable name at position 2"),
  new InvalidRow("/{term:1}", "invalid character ':' in variable name at position 6"),
  new InvalidRow("/{+path}", "invalid character '+' in variable name at position 2"),
  new InvalidRow("/{#frag}", "invalid character '#' in variable name at position 2"),
  new InvalidRow("/{/segs}", "invalid character '/' in variable name at position 2"),
  new InvalidRow("/{;params}", "invalid character ';' in variable name at position 2"),
  new InvalidRow("/{&more}", "invalid character '&' in variable name at position 2"),
  new InvalidRow("/{x,y}", "invalid character ',' in variable name at position 3"),
  new InvalidRow("/{list*}", "invalid character '*' in variable name at position 6"),
  new InvalidRow("/{a-b}", "invalid character '-' in variable name at position 3"),
  new InvalidRow("/{ x}", "invalid character ' ' in variable name at position 2"),
];

describe("parseUriTemplate", () => {
  it("accepts the HTTP-rule grammar", () => {
    for (let i = 0; i < VALID.length; i++) {
      const row = VALID[i];
      const result = parseUriTemplate(row.text);
      expect(result.error).toBe("", row.text);
      expect(result.template).not.toBeNull(row.text);
      expect(render(result.template!)).toBe(row.parsed, row.text);
      expect(result.template!.text).toBe(row.text);
    }
  });

  it("rejects everything else, saying what and where", () => {
    for (let i = 0; i < INVALID.length; i++) {
      const row = INVALID[i];
      const result = parseUriTemplate(row.text);
      expect(result.template).toBeNull(row.text);
      expect(result.error).toBe('invalid uriTemplate "' + row.text + '": ' + row.error, row.text);
    }
  });

  it("types the segments", () => {
    const t = parseUriTemplate("/a/{b}/**").template!;
    expect(t.segments[0].kind).toBe(SegmentKind.Literal);
    expect(t.segments[1].kind).toBe(SegmentKind.Star);
    expect(t.segments[2].kind).toBe(SegmentKind.DoubleStar);
    expect(t.doubleStarIndex()).toBe(2);
    expect(parseUriTemplate("/a/*").template!.doubleStarIndex()).toBe(-1);
  });

  it("gives variables the same shape as the wildcards they stand for", () => {
    const rows: string[][] = [
      ["/a/{id}", "/a/*"],
      ["/a/{name=*}", "/a/*"],
      ["/a/{x=b/**}/c:verb", "/a/b/**/c/verb"],
      // The verb is a last literal segment in the trie, as upstream stores it.
      ["/a:verb", "/a/verb"],
      ["/**", "/**"],
    ];
    for (let i = 0; i < rows.length; i++) {
      expect(parseUriTemplate(rows[i][0]).template!.shapeKey()).toBe(rows[i][1], rows[i][0]);
    }
  });

  it("handles very long templates", () => {
    let text = "";
    for (let i = 0; i < 2000; i++) text += "/s" + i.toString();
    const t = parseUriTemplate(text + "/{rest=**}:go").template!;
    expect(t.segments.length).toBe(2001);
    expect(t.variables[0].startSegment).toBe(2000);
    expect(parseUriTemplate(text + "//x").error).toBe(
      'invalid uriTemplate "' + text + '//x": empty segment at position ' + (text.length + 1).toString(),
    );
  });
});

describe("template_check", () => {
  it("returns an empty string for a valid template and the error otherwise", () => {
    expect(template_check("/shelves/{shelf}/books/{book=**}:list")).toBe("");
    expect(template_check("/a//b")).toBe('invalid uriTemplate "/a//b": empty segment at position 3');
    expect(template_check("/search{?q*,lang}")).toBe(
      'invalid uriTemplate "/search{?q*,lang}": a variable must occupy a whole segment at position 7',
    );
  });
});
