// Builds everything the project ships:
//   build/filter.wasm         release module (what proxies and the Node host load)
//   build/filter.debug.wasm   debug module (runtime checks on, for tests)
//   build/out/*.mjs           the host's command-line programs, bundled with esbuild (and their shared chunks)
//   build/deploy/             Envoy bootstrap, WasmPlugin, EnvoyFilter, OCI image layout (build/deploy_artifacts.ts)
//   build/out/mesh-policy-filter*.mjs, build/types/*.d.ts
//                             the package's library entries (host/library) and their declarations
//   native/original_dst/build/Release/original_dst.node
//                             the sidecar's original-destination addon (node-gyp; Linux only)
// Usage: node build/build.mjs [--wasm-only | --programs-only]
import { execFile, execFileSync } from "node:child_process";
import { mkdirSync, readdirSync, existsSync, rmSync, readFileSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { build } from "esbuild";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const asc = join(root, "node_modules", "assemblyscript", "bin", "asc.js");

// Both builds count their allocations (build/count_allocations.mjs): the
// collector runs when there is garbage (assembly/collection.ts) and the
// benchmark reads the count. asc resolves a transform named in asconfig.json
// as a package, so it is passed here.
const countAllocations = ["--transform", join(root, "build", "count_allocations.mjs")];

/** Compiles one asc target; resolves with its { stdout, stderr }, rejects naming the target (asc's messages included). */
function compileWasm(target) {
  const extra = countAllocations;
  return new Promise((resolve, reject) => {
    execFile(
      process.execPath,
      [asc, "assembly/index.ts", "--target", target, ...extra],
      { cwd: root, maxBuffer: 64 * 1024 * 1024 },
      (error, stdout, stderr) => {
        if (error) reject(new Error(`asc --target ${target} failed (${error.code ?? error.signal}):\n${stdout}${stderr}`));
        else resolve({ stdout, stderr });
      },
    );
  });
}

/** Packages bundled into build/out (see the esbuild call). */
const BUNDLED_PACKAGES = ["@peculiar/x509", "jose", "yaml", "prom-client", "@grpc/grpc-js", "protobufjs", "commander"];

/** An esbuild plugin: every package import is external, except those of `bundled` and whatever a bundled package imports. */
function externalExcept(bundled) {
  return {
    name: "external-except",
    setup(b) {
      b.onResolve({ filter: /^[^./]/ }, (args) => {
        if (args.path.startsWith("node:") || args.importer.includes("/node_modules/")) return undefined;
        const name = args.path
          .split("/")
          .slice(0, args.path.startsWith("@") ? 2 : 1)
          .join("/");
        return bundled.includes(name) ? undefined : { path: args.path, external: true };
      });
    },
  };
}

/** The programs in build/out (esbuild), unless --wasm-only. */
async function bundlePrograms() {
  if (process.argv.includes("--wasm-only")) return;
  // Each file in host/bin is one program; it becomes build/out/<name>.mjs.
  const binDir = join(root, "host", "bin");
  const entries = existsSync(binDir) ? readdirSync(binDir).filter((f) => f.endsWith(".ts")) : [];
  const outDir = join(root, "build", "out");
  mkdirSync(outDir, { recursive: true });
  // Chunk names change with their content: drop the previous build's.
  for (const f of readdirSync(outDir)) if (f.startsWith("chunk-")) rmSync(join(outDir, f));
  await build({
    absWorkingDir: root,
    entryPoints: entries.map((f) => join("host", "bin", f)),
    outdir: "build/out",
    outExtension: { ".js": ".mjs" },
    bundle: true,
    platform: "node",
    format: "esm",
    target: "node20",
    // Libraries stay in node_modules, except the few below (and what they import):
    // bundled, each is one file to read and compile instead of tens to hundreds
    // (@peculiar/x509 and its ASN.1 schemas: over 200), which halves their load
    // time at every start of a program (docs/benchmarks.md "meshctl x simulate";
    // @grpc/grpc-js, protobufjs and commander: 0.18 → 0.09 s of CPU). Bundled
    // packages must not find files of their own (__dirname) on the paths we use:
    // @grpc/grpc-js reads its .proto files only for channelz and ORCA, which no
    // program serves; @grpc/proto-loader, @grpc/reflection and grpc-health-check
    // (which read theirs) stay in node_modules and are loaded when used.
    plugins: [externalExcept(BUNDLED_PACKAGES)],
    // Code shared by programs, and each module a program imports only when needed
    // (meshctl's commands), goes to build/out/chunk-*.mjs: a program loads only
    // what the command it runs uses. Chunks sit beside the programs, so code that
    // finds files from import.meta.url (build/filter.wasm, proto/) finds them.
    splitting: true,
    chunkNames: "chunk-[hash]",
    sourcemap: "linked",
    // A bundled CommonJS package requires Node's modules through \`require\`, which an ES module lacks.
    banner: {
      js: '#!/usr/bin/env node\nimport { createRequire as __bundledCreateRequire } from "node:module";\nconst require = __bundledCreateRequire(import.meta.url);',
    },
    logLevel: "warning",
  });
}

/**
 * The library entries (`import … from 'mesh-policy-filter'` and
 * 'mesh-policy-filter/fastify'), in build/out beside the programs so that
 * code finding build/filter.wasm from import.meta.url finds it. No shebang,
 * and nothing runs on import. prom-client and fastify stay external: the
 * application's registry and Fastify are the ones the package resolves.
 * Runs after bundlePrograms, which clears the chunks first.
 */
async function bundleLibrary() {
  if (process.argv.includes("--wasm-only")) return;
  await build({
    absWorkingDir: root,
    entryPoints: { "mesh-policy-filter": "host/library/index.ts", "mesh-policy-filter-fastify": "host/library/fastify.ts" },
    outdir: "build/out",
    outExtension: { ".js": ".mjs" },
    bundle: true,
    platform: "node",
    format: "esm",
    target: "node20",
    plugins: [externalExcept(BUNDLED_PACKAGES.filter((p) => p !== "prom-client"))],
    splitting: true,
    chunkNames: "chunk-[hash]",
    sourcemap: "linked",
    banner: { js: 'import { createRequire as __bundledCreateRequire } from "node:module";\nconst require = __bundledCreateRequire(import.meta.url);' },
    logLevel: "warning",
  });
}

/** The public declaration files of host/library: generated by tsc from the source, never written by hand. */
const LIBRARY_DECLARATIONS = ["index.d.ts", "fastify.d.ts", "types.d.ts"];

/**
 * build/types: tsc's declarations of host/library's public files, their
 * relative imports pointing at .js as published declarations do. Fails when
 * one of them imports a file that is not shipped.
 */
function libraryDeclarations() {
  if (process.argv.includes("--wasm-only")) return Promise.resolve();
  const tsc = join(root, "node_modules", "typescript", "bin", "tsc");
  return new Promise((resolve, reject) => {
    execFile(
      process.execPath,
      [tsc, "-p", join(root, "build", "tsconfig.library.json")],
      { cwd: root, maxBuffer: 16 * 1024 * 1024 },
      (error, stdout, stderr) => {
        if (error) return reject(new Error(`tsc (library declarations) failed:\n${stdout}${stderr}`));
        const from = join(root, "build", "types-all", "host", "library");
        const to = join(root, "build", "types");
        rmSync(to, { recursive: true, force: true });
        mkdirSync(to, { recursive: true });
        for (const file of LIBRARY_DECLARATIONS) {
          const text = readFileSync(join(from, file), "utf8").replace(/(from "\.\/[^"]+)\.ts"/g, '$1.js"');
          for (const [, target] of text.matchAll(/from "\.\/([^"]+)\.js"/g)) {
            if (!LIBRARY_DECLARATIONS.includes(`${target}.d.ts`))
              return reject(
                new Error(
                  `build/types/${file} imports ./${target}.js, which is not a public declaration (${LIBRARY_DECLARATIONS.join(", ")}): keep host/library's public types in types.ts`,
                ),
              );
          }
          writeFileSync(join(to, file), text);
        }
        rmSync(join(root, "build", "types-all"), { recursive: true, force: true });
        resolve(undefined);
      },
    );
  });
}

/**
 * The original-destination addon (native/original_dst, host/capture/original_destination.ts)
 * with node-gyp: npm's own copy (npm names it in npm_config_node_gyp), against
 * the headers installed beside this Node when there are (no download). make
 * rebuilds only what changed. Linux only: elsewhere nothing is captured.
 */
function buildAddon() {
  if (process.platform !== "linux") return Promise.resolve();
  const dir = join(root, "native", "original_dst");
  const npmDir = process.env.npm_execpath ? join(dirname(process.env.npm_execpath), "..") : join(dirname(process.execPath), "..", "lib", "node_modules", "npm");
  const nodeGyp = [process.env.npm_config_node_gyp, join(npmDir, "node_modules", "node-gyp", "bin", "node-gyp.js")].find((p) => p && existsSync(p));
  if (!nodeGyp) return Promise.reject(new Error("node-gyp not found (npm's node_modules/node-gyp): cannot build native/original_dst"));
  const prefix = join(dirname(process.execPath), "..");
  const nodedir = existsSync(join(prefix, "include", "node", "node_api.h")) ? [`--nodedir=${prefix}`] : [];
  const gyp = (args) =>
    new Promise((resolve, reject) =>
      execFile(process.execPath, [nodeGyp, ...args, ...nodedir], { cwd: dir, maxBuffer: 16 * 1024 * 1024 }, (error, stdout, stderr) =>
        error ? reject(new Error(`node-gyp ${args[0]} (native/original_dst) failed:\n${stdout}${stderr}`)) : resolve(),
      ),
    );
  const configured = existsSync(join(dir, "build", "Makefile"));
  return (configured ? Promise.resolve() : gyp(["configure"])).then(() => gyp(["build"]));
}

// The two modules and the bundles do not depend on each other: built side by
// side (asc is single-threaded and the release build takes most of the time).
// Every step runs to its end; any failure fails the build after all are reported.
// --programs-only rebuilds build/out alone (the modules of a previous build stay).
const programsOnly = process.argv.includes("--programs-only");
const steps = await Promise.allSettled(
  programsOnly
    ? [bundlePrograms()]
    : [
        compileWasm("release"),
        compileWasm("debug"),
        bundlePrograms().then(bundleLibrary),
        libraryDeclarations(),
        ...(process.argv.includes("--wasm-only") ? [] : [buildAddon()]),
      ],
);
for (const step of steps) {
  if (step.status !== "fulfilled" || !step.value) continue;
  process.stdout.write(step.value.stdout);
  process.stderr.write(step.value.stderr);
}
const failed = steps.filter((step) => step.status === "rejected");
for (const step of failed) process.stderr.write(`${step.reason instanceof Error ? step.reason.message : step.reason}\n`);
if (failed.length > 0) process.exit(1);

if (!process.argv.includes("--wasm-only") && !programsOnly) {
  // The deployable artifacts need the module and the host's configuration decoding (TypeScript, run by tsx).
  execFileSync(process.execPath, ["--import", "tsx", join(root, "build", "deploy_artifacts.ts")], { cwd: root, stdio: "inherit" });
}
