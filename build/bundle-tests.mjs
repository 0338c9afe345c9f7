// Bundles test files for build/run-node-tests.mjs: each test/**/*.test.ts
// becomes build/out/tests/<run>/test/**/*.test.mjs, with our TypeScript (test
// helpers, host/) compiled in and the code files share split into chunks;
// packages stay external (loaded from node_modules, as before).
//
// Why: with `--import tsx` every test file process started tsx's loader
// thread and sent each of its hundreds of TypeScript modules through it;
// a bundle is one plain ES module to load. On the loaded development machine
// that saved about a second of CPU per file of test/cli (docs: README "npm test").
//
// A module still sees its own place: `import.meta.url` and `import.meta.dirname`
// are replaced by the source file's, so fixtures, build/filter.wasm and proto/
// are found as when tsx runs the file. A test can still be run on its own
// from source: `node --import tsx --test test/x/y.test.ts`.
import { readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { pathToFileURL } from "node:url";

/** Where the bundles go, a folder per run, so runs side by side never remove each other's (build/out is not tracked). */
export const TESTS_OUT = join("build", "out", "tests");

/** Each source's `import.meta` values, as string literals. */
function ownImportMeta() {
  return {
    name: "own-import-meta",
    setup(b) {
      b.onLoad({ filter: /\.[cm]?ts$/ }, (args) => {
        if (args.path.includes("/node_modules/")) return undefined;
        const text = readFileSync(args.path, "utf8")
          .replaceAll("import.meta.dirname", JSON.stringify(dirname(args.path)))
          .replaceAll("import.meta.url", JSON.stringify(pathToFileURL(args.path).href));
        return { contents: text, loader: "ts" };
      });
    },
  };
}

/** The source of a bundle's path (relative to root): build/out/tests/<run>/test/a/b.test.mjs → test/a/b.test.ts; any other path as it is. */
export function sourcePath(path) {
  const m = /^build\/out\/tests\/[^/]+\/(.*)\.mjs$/.exec(path);
  return m ? `${m[1]}.ts` : path;
}

/**
 * Bundles the given sources (paths relative to root) into build/out/tests/<run>
 * and returns the bundles' paths in the same order (test/a/b.test.ts →
 * build/out/tests/<run>/test/a/b.test.mjs). The caller removes the folder.
 */
export async function bundleTests(root, sources, run) {
  // Loaded here only: the durations reporter imports this file for sourcePath.
  const { build, stop } = await import("esbuild");
  const outdir = join(TESTS_OUT, run);
  await build({
    absWorkingDir: root,
    entryPoints: sources,
    outdir,
    outbase: ".",
    outExtension: { ".js": ".mjs" },
    bundle: true,
    splitting: true,
    chunkNames: "chunk-[hash]",
    platform: "node",
    format: "esm",
    target: "node20",
    packages: "external",
    // For a debugger or `node --enable-source-maps` (not on by default: it slows every start).
    sourcemap: "linked",
    plugins: [ownImportMeta()],
    logLevel: "warning",
  });
  // esbuild's service process would otherwise live as long as the runner.
  await stop();
  return sources.map((source) => join(outdir, source.replace(/\.ts$/, ".mjs")));
}
