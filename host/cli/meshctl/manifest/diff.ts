import { readdirSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { stringify } from "yaml";
import { flattenDocuments } from "../../../config/documents.ts";
import { ConfigError } from "../../../config/errors.ts";
import { yamlDocuments } from "../../../config/yaml.ts";
import { type GlobPattern, globPattern } from "../../../regex/glob.ts";

/**
 * `meshctl manifest diff A B`: two renderings compared object by object,
 * keyed `Kind:namespace:name` (namespace empty for cluster-scoped objects),
 * as upstream's `istioctl manifest diff`: objects only in one side, and for
 * the others a tree of the differing fields with `old -> new` leaves.
 */
type Obj = Record<string, unknown>;

export interface DiffOptions {
  /** `--select`: `Kind:namespace:name` patterns (`*` or empty parts match anything); default every object. */
  select: readonly string[];
  /** `--ignore`: the same, optionally with a fourth part, a dotted field path (glob) to ignore in matching objects. */
  ignore: readonly string[];
  /** `--rename`: `A->B` pairs renaming objects of the first side (an empty or `*` part of B keeps A's). */
  rename: ReadonlyArray<readonly [string, string]>;
}

/** The objects of a file, or of every .yaml/.yml file under a folder (`-r`, or when the argument is one), by key. */
export function readManifests(path: string, directory: boolean): Map<string, Obj> {
  const stat = statSync(path, { throwIfNoEntry: false });
  if (!stat) throw new ConfigError({ file: path }, "(argument)", "a manifest file or folder", "no such file or directory");
  if (directory && !stat.isDirectory()) throw new ConfigError({ file: path }, "(argument)", "a folder (--directory)", "a file");
  const files = stat.isDirectory() ? yamlFiles(path) : [path];
  const out = new Map<string, Obj>();
  for (const file of files) {
    yamlDocuments(readFileSync(file, "utf8")).forEach((d, i) => {
      if (!d.ok) throw new ConfigError({ file }, `document ${i + 1}`, "valid YAML", d.message);
      for (const raw of flattenDocuments(d.value)) {
        const o = raw as Obj;
        const meta = (o.metadata ?? {}) as Obj;
        if (typeof o.kind !== "string" || typeof meta.name !== "string")
          throw new ConfigError({ file }, `document ${i + 1}`, "an object with kind and metadata.name", JSON.stringify(o).slice(0, 60));
        out.set(`${o.kind}:${typeof meta.namespace === "string" ? meta.namespace : ""}:${meta.name}`, o);
      }
    });
  }
  return out;
}

function yamlFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true })
    .sort((a, b) => (a.name < b.name ? -1 : 1))
    .flatMap((e) => (e.isDirectory() ? yamlFiles(join(dir, e.name)) : /\.ya?ml$/.test(e.name) ? [join(dir, e.name)] : []));
}

/** A `Kind:namespace:name` pattern (`*` anywhere matches any run), matched as a glob: a flag's text never reaches a backtracking regex. */
function resourcePattern(text: string, flag: string): GlobPattern {
  const parts = text.trim().split(":");
  if (parts.length < 3) throw new ConfigError({}, flag, "items of the form Kind:namespace:name (a part empty or * matches anything)", JSON.stringify(text));
  return globPattern(
    parts
      .slice(0, 3)
      .map((p) => (p === "" ? "*" : p))
      .join(":"),
  );
}

export function parseList(text: string): string[] {
  return text
    .split(",")
    .map((s) => s.trim())
    .filter((s) => s.length > 0);
}

export function parseRenames(text: string): Array<[string, string]> {
  return parseList(text).map((pair) => {
    const [from, to, ...rest] = pair.split("->");
    if (to === undefined || rest.length > 0 || from.split(":").length !== 3 || to.trim().split(":").length !== 3) {
      throw new ConfigError({}, "--rename", "pairs Kind:namespace:name->Kind:namespace:name, comma-separated", JSON.stringify(pair));
    }
    return [from.trim(), to.trim()];
  });
}

/** The text upstream printed, and whether the renderings are the same. */
export function diffManifests(a: Map<string, Obj>, b: Map<string, Obj>, o: DiffOptions): { same: boolean; text: string } {
  const selects = (o.select.length > 0 ? o.select : ["::"]).map((s) => resourcePattern(s, "--select"));
  const ignores = o.ignore.map((s) => ({ re: resourcePattern(s, "--ignore"), path: s.split(":").slice(3).join(":") }));
  const renamed = new Map<string, Obj>();
  for (const [key, obj] of a) {
    const rule = o.rename.find(([from]) => resourcePattern(from, "--rename").test(key));
    if (!rule) renamed.set(key, obj);
    else {
      const old = key.split(":");
      renamed.set(
        rule[1]
          .split(":")
          .map((p, i) => (p === "" || p === "*" ? old[i] : p))
          .join(":"),
        obj,
      );
    }
  }
  const keep = (key: string) => selects.some((re) => re.test(key)) && !ignores.some((i) => i.path === "" && i.re.test(key));
  const sections = new Map<string, string>();
  for (const [key, x] of renamed) {
    if (!keep(key)) continue;
    const y = b.get(key);
    if (!y) {
      sections.set(key, `Object ${key} is missing in B:\n`);
      continue;
    }
    const paths = ignores.filter((i) => i.path !== "" && i.re.test(key)).map((i) => globPattern(i.path));
    const tree = compare(x, y, [], paths);
    if (tree !== undefined) sections.set(key, `Object ${key} has diffs:\n\n${stringify(tree, { lineWidth: 0 })}`);
  }
  for (const key of b.keys()) if (keep(key) && !renamed.has(key)) sections.set(key, `Object ${key} is missing in A:\n`);
  if (sections.size === 0) return { same: true, text: "Manifests are identical\n" };
  const body = [...sections.keys()]
    .sort()
    .map((k) => sections.get(k))
    .join("\n\n");
  return { same: false, text: `Differences in manifests are:\n\n\n${body}\n` };
}

const isEmpty = (v: unknown) => v === undefined || v === null || v === "" || (typeof v === "object" && Object.keys(v as object).length === 0);
const show = (v: unknown) => (typeof v === "object" && v !== null ? JSON.stringify(v) : String(v));

/** The differing leaves of x and y as a tree (`old -> new`), or undefined when equal. */
function compare(x: unknown, y: unknown, path: string[], ignored: readonly GlobPattern[]): unknown {
  if (ignored.some((re) => re.test(path.join(".")))) return undefined;
  const bothObjects = typeof x === "object" && x !== null && typeof y === "object" && y !== null && Array.isArray(x) === Array.isArray(y);
  if (bothObjects) {
    const tree: Obj = {};
    const keys = Array.isArray(x)
      ? [...Array(Math.max(x.length, (y as unknown[]).length)).keys()].map(String)
      : [...new Set([...Object.keys(x as Obj), ...Object.keys(y as Obj)])].sort();
    for (const k of keys) {
      const step = Array.isArray(x) ? `[${k}]` : k;
      const d = compare((x as Obj)[k], (y as Obj)[k], [...path, step], ignored);
      if (d !== undefined) tree[step] = d;
    }
    return Object.keys(tree).length > 0 ? tree : undefined;
  }
  if (JSON.stringify(x) === JSON.stringify(y)) return undefined;
  if (isEmpty(x) && isEmpty(y)) return undefined;
  if (isEmpty(y)) return `${show(x)} ->`;
  if (isEmpty(x)) return `-> ${show(y)}`;
  return `${show(x)} -> ${show(y)}`;
}
