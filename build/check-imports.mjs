// `npm run check:imports` (part of `npm test`): the import graph of host/ and
// assembly/ has no cycle between files, and no folder imports a folder of a
// higher layer or of its own layer in a cycle. The layers are declared below,
// lowest first, each with why it sits there; a file belongs to the longest
// declared folder (or file) that contains it, and a file under no declaration
// is an error (declare where a new folder sits).
//
// Every relative import counts: static, `import type`, re-exports and
// `import("…")` with a literal (TypeScript's own pre-processor finds them).
// Usage: node build/check-imports.mjs [--graph]  (--graph prints the folder graph)
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { dirname, join, relative, resolve, sep } from "node:path";
import { fileURLToPath } from "node:url";
import ts from "typescript";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");

/** host/: the TypeScript host. Lowest first; folders of one layer are peers. */
const HOST_LAYERS = [
  { units: ["host/wire"], why: "wire formats (protobuf descriptors, gRPC framing, attribute codecs): nothing of ours below" },
  { units: ["host/daemon"], why: "what every program shares: flags, Go durations, version, exit codes, signals, probes" },
  { units: ["host/telemetry"], why: "logging, metrics, monitoring and ControlZ servers; read the daemon's flags and version" },
  { units: ["host/capture"], why: "traffic capture: the pod's iptables rules and a redirected connection's original destination (the native addon)" },
  { units: ["host/wasm", "host/filter"], why: "the proxy-wasm host that runs the filter module, and the embedding API's codec" },
  { units: ["host/regex"], why: "the host regex engine (the filter module's), compiled by configuration decoding" },
  { units: ["host/mesh/hosts.ts"], why: "host names and the DNS domain: pure; configuration decoding resolves a resource's short hosts with it" },
  { units: ["host/config"], why: "configuration decoded once, at the edge, into typed resources" },
  { units: ["host/mesh"], why: "the mesh model built from the decoded resources" },
  { units: ["host/security", "host/hub", "host/inject"], why: "engines over the model: security, the hub client transport, sidecar injection" },
  { units: ["host/anchor", "host/hubs"], why: "servers: the CA and the policy hub" },
  { units: ["host/discovery"], why: "the control plane: the model turned into xDS for proxies" },
  { units: ["host/proxy"], why: "the data path: the sidecar, a client of the control plane's protocol" },
  { units: ["host/library"], why: "the package's API for Node servers: the sidecar's filter host behind createFilter, middleware and the Fastify plugin" },
  { units: ["host/demo"], why: "the local demo mesh, run by npm start and meshctl" },
  { units: ["host/cli"], why: "meshctl: reads every layer below" },
  { units: ["host/daemon/spec_surface"], why: "each program's documented flags and metrics, read from the parts that define them" },
  { units: ["host/bin"], why: "program entry points" },
];

/** assembly/: the filter module. Lowest first. */
const ASSEMBLY_LAYERS = [
  {
    units: ["assembly/utf8.ts", "assembly/fnv64.ts", "assembly/status_codes.ts", "assembly/known_strings.ts", "assembly/collection.ts", "assembly/json.ts"],
    why: "text, hashing, google.rpc status codes, interned strings, the collector's pacing and JSON: no domain in them",
  },
  { units: ["assembly/text.ts"], why: "byte-string helpers over utf8 and hashing" },
  { units: ["assembly/recent_strings.ts", "assembly/regex", "assembly/template"], why: "string caches and the two pattern engines (regex, URI templates)" },
  // The hot path's logic, bottom up.
  { units: ["assembly/attributes"], why: "the attribute bag, its values, names and the report attributes" },
  {
    units: ["assembly/proto", "assembly/pairs.ts", "assembly/string_match.ts"],
    why: "protobuf reading and writing (and the x-mesh-attributes codec), header pairs, string matches over attributes",
  },
  { units: ["assembly/request.ts", "assembly/quota.ts", "assembly/derived_places.ts"], why: "a request's view, quota rules, the derived attributes' order" },
  {
    units: ["assembly/hub", "assembly/api_key.ts", "assembly/request_derivation.ts"],
    why: "the hub's wire messages, API keys, the request attributes' derivation",
  },
  { units: ["assembly/api_spec.ts", "assembly/request_attributes.ts"], why: "API specs (operations, keys), a request's lazy attributes" },
  { units: ["assembly/config"], why: "the plugin configuration, compiled" },
  { units: ["assembly/client", "assembly/evaluate.ts"], why: "the hub client's caches and batches, and one request's evaluation" },
  { units: ["assembly/abi"], why: "the host calls (proxy-wasm imports) and their marshalling" },
  { units: ["assembly/proxy"], why: "the filter's HTTP and TCP stream logic over the host calls" },
  { units: ["assembly/entry", "assembly/embed"], why: "the module's entry points: proxy_on_* exports, and the embedding exports" },
  { units: ["assembly/index.ts"], why: "the module's root: re-exports the entry points" },
];

/**
 * Folder cycles inside one layer that are known and not yet untangled: each
 * a set of units. A cycle passes only if it lies within one entry; remove an
 * entry once its cycle is gone (a stale entry is reported). None is left
 * (issue 29 untangled the hot path's): a new folder cycle fails the check.
 */
const KNOWN_FOLDER_CYCLES = [];

const layers = [...HOST_LAYERS, ...ASSEMBLY_LAYERS];
const layerOf = new Map();
layers.forEach((layer, i) => {
  for (const unit of layer.units) layerOf.set(unit, i);
});
const units = [...layerOf.keys()].sort((a, b) => b.length - a.length);

function unitOf(file) {
  return units.find((u) => file === u || file.startsWith(`${u}/`));
}

function sourceFiles(dir) {
  const out = [];
  for (const name of readdirSync(join(root, dir))) {
    const path = `${dir}/${name}`;
    if (statSync(join(root, path)).isDirectory()) out.push(...sourceFiles(path));
    else if (name.endsWith(".ts")) out.push(path);
  }
  return out;
}

/** The file a relative specifier names: `x.ts` as written (host), or `x` meaning x.ts or x/index.ts (assembly). */
function resolveSpecifier(from, specifier) {
  const target = relative(root, resolve(root, dirname(from), specifier))
    .split(sep)
    .join("/");
  if (target.endsWith(".ts")) return target;
  if (existsSync(join(root, `${target}.ts`))) return `${target}.ts`;
  if (existsSync(join(root, target, "index.ts"))) return `${target}/index.ts`;
  return undefined; // JSON and other non-source files
}

const files = [...sourceFiles("host"), ...sourceFiles("assembly")];
const imports = new Map();
for (const file of files) {
  const { importedFiles } = ts.preProcessFile(readFileSync(join(root, file), "utf8"), true, true);
  const targets = new Set();
  for (const { fileName } of importedFiles) {
    if (!fileName.startsWith(".")) continue;
    const target = resolveSpecifier(file, fileName);
    if (target) targets.add(target);
  }
  imports.set(file, targets);
}

/** Strongly connected components with more than one node (Tarjan). */
function cycles(nodes, next) {
  let counter = 0;
  const index = new Map();
  const low = new Map();
  const stack = [];
  const onStack = new Set();
  const found = [];
  const visit = (v) => {
    index.set(v, counter);
    low.set(v, counter);
    counter++;
    stack.push(v);
    onStack.add(v);
    for (const w of next(v)) {
      if (!index.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v), low.get(w)));
      } else if (onStack.has(w)) low.set(v, Math.min(low.get(v), index.get(w)));
    }
    if (low.get(v) === index.get(v)) {
      const component = [];
      let w;
      do {
        w = stack.pop();
        onStack.delete(w);
        component.push(w);
      } while (w !== v);
      if (component.length > 1) found.push(component.sort());
    }
  };
  for (const v of nodes) if (!index.has(v)) visit(v);
  return found;
}

const problems = [];

for (const file of files) if (!unitOf(file)) problems.push(`${file}: in no declared layer (declare its folder in build/check-imports.mjs)`);

for (const component of cycles(files, (f) => [...imports.get(f)].filter((t) => imports.has(t))))
  problems.push(`import cycle between files: ${component.join(", ")}`);

const folderEdges = new Map();
for (const [file, targets] of imports) {
  const from = unitOf(file);
  for (const target of targets) {
    const to = unitOf(target);
    if (!from || !to || from === to) continue;
    if (layerOf.get(to) > layerOf.get(from)) problems.push(`upward import: ${file} (${from}) imports ${target} (${to}, a higher layer)`);
    if (!folderEdges.has(from)) folderEdges.set(from, new Map());
    const edges = folderEdges.get(from);
    if (!edges.has(to)) edges.set(to, []);
    edges.get(to).push(`${file} -> ${target}`);
  }
}

const knownUsed = new Set();
for (const component of cycles([...folderEdges.keys()], (u) => [...(folderEdges.get(u)?.keys() ?? [])])) {
  const known = KNOWN_FOLDER_CYCLES.findIndex((k) => component.every((u) => k.includes(u)));
  if (known >= 0) {
    knownUsed.add(known);
    continue;
  }
  const inside = new Set(component);
  const arrows = component.flatMap((u) => [...(folderEdges.get(u) ?? [])].filter(([to]) => inside.has(to)).map(([, list]) => list[0]));
  problems.push(`folder cycle: ${component.join(", ")} (e.g. ${arrows.slice(0, 8).join("; ")})`);
}
KNOWN_FOLDER_CYCLES.forEach((k, i) => {
  if (!knownUsed.has(i)) problems.push(`KNOWN_FOLDER_CYCLES entry ${i} (${k.join(", ")}) is no longer a cycle: remove it`);
});

if (process.argv.includes("--graph")) {
  for (const [from, edges] of [...folderEdges].sort()) for (const [to, list] of [...edges].sort()) console.log(`${from} -> ${to} (${list.length})`);
}

if (problems.length > 0) {
  for (const p of problems) console.error(`check-imports: ${p}`);
  console.error(`check-imports: ${problems.length} problem(s); the layers are declared in build/check-imports.mjs`);
  process.exit(1);
}
const left = KNOWN_FOLDER_CYCLES.length > 0 ? `; ${KNOWN_FOLDER_CYCLES.length} known folder cycle(s) left (KNOWN_FOLDER_CYCLES)` : "";
console.log(`check-imports: ${files.length} files of host/ and assembly/, no import cycle between files, no upward import (${layers.length} layers)${left}`);
