// The system tools the tests use, installed by the suite itself when missing,
// so that `npm install && npm test` passes on a fresh machine with nothing
// installed by hand. `npm test` calls ensureSystemTools() once, before any test
// file runs (one apt-get at a time; test files run in parallel and must not
// race for the package lock). Run alone: `node build/system-tools.mjs`.
//
// As root a missing tool is installed with apt-get; otherwise the run stops at
// once naming the Debian package to install. promtool comes from Debian's
// prometheus package unpacked into build/out/tools (never configured, so no
// service is set up or started); its folder is put on PATH for the tests.
import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync, readdirSync, rmSync } from "node:fs";
import { delimiter, dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const unpacked = join(root, "build", "out", "tools");

/** Each tool a test runs: its command, the Debian package that has it, and which tests need it. */
export const SYSTEM_TOOLS = [
  { command: "skopeo", debianPackage: "skopeo", usedBy: "test/deploy (a real OCI client reads the module's image)" },
  { command: "promtool", debianPackage: "prometheus", unpackOnly: true, usedBy: "the metrics lint (promtool check metrics)" },
  { command: "redis-server", debianPackage: "redis-server", usedBy: "the hub's shared quota store" },
  { command: "iptables", debianPackage: "iptables", usedBy: "traffic capture in network namespaces" },
  { command: "ip", debianPackage: "iproute2", usedBy: "network namespaces and links" },
  { command: "curl", debianPackage: "curl", usedBy: "test/e2e/mesh (sleep's client, run in its pod's namespace)" },
  { command: "mount", debianPackage: "mount", usedBy: "test/e2e/mesh (a pod's volumes, mounted in its own mount namespace)" },
];

/**
 * What `npm run conformance` builds the real proxy-wasm host with (build/pwhost.mjs,
 * test/pwhost/build-driver.sh; the shared build.sh installs cmake, ninja and its
 * libraries itself). build/conformance.mjs makes them runnable first.
 */
export const CONFORMANCE_TOOLS = [
  { command: "g++", debianPackage: "g++", usedBy: "compiling the proxy-wasm host and its driver" },
  { command: "gcc", debianPackage: "gcc", usedBy: "compiling WAMR (C)" },
  { command: "patch", debianPackage: "patch", usedBy: "the driver's patch (test/pwhost/pwdriver-waits.patch)" },
  { command: "flock", debianPackage: "util-linux", usedBy: "one host build at a time (build/pwhost.mjs)" },
];

function onPath(command, path = process.env.PATH ?? "") {
  return path.split(delimiter).some((dir) => dir && existsSync(join(dir, command)));
}

const isRoot = () => typeof process.getuid === "function" && process.getuid() === 0;

let updated = false;
function apt(args) {
  if (!updated) {
    spawnSync("apt-get", ["update", "-qq"], { stdio: ["ignore", "ignore", "inherit"] });
    updated = true;
  }
  const r = spawnSync("apt-get", args, { cwd: unpacked, stdio: ["ignore", "ignore", "inherit"], env: { ...process.env, DEBIAN_FRONTEND: "noninteractive" } });
  return r.status === 0;
}

/** Unpacks a package's files (no maintainer scripts run) under build/out/tools/<package>; returns its bin folder. */
function unpack(debianPackage) {
  const into = join(unpacked, debianPackage);
  const bin = join(into, "usr", "bin");
  if (existsSync(bin)) return bin;
  mkdirSync(unpacked, { recursive: true });
  for (const f of readdirSync(unpacked)) if (f.startsWith(`${debianPackage}_`) && f.endsWith(".deb")) rmSync(join(unpacked, f));
  if (!apt(["download", "-qq", "-o", "APT::Sandbox::User=root", debianPackage])) return undefined;
  const deb = readdirSync(unpacked).find((f) => f.startsWith(`${debianPackage}_`) && f.endsWith(".deb"));
  if (!deb) return undefined;
  const r = spawnSync("dpkg-deb", ["-x", join(unpacked, deb), into], { stdio: "inherit" });
  rmSync(join(unpacked, deb));
  return r.status === 0 && existsSync(bin) ? bin : undefined;
}

/**
 * Makes every tool of `tools` (SYSTEM_TOOLS unless told) runnable, installing what is missing.
 * Returns the PATH the tests should run with, or throws naming what could not be had.
 */
export function ensureSystemTools(log = (line) => process.stdout.write(`${line}\n`), tools = SYSTEM_TOOLS) {
  let path = process.env.PATH ?? "";
  // iptables and ip live in sbin, which a non-login environment may leave off PATH.
  for (const sbin of ["/usr/sbin", "/sbin"]) if (!path.split(delimiter).includes(sbin)) path = `${path}${delimiter}${sbin}`;
  const cachedPromtool = join(unpacked, "prometheus", "usr", "bin");
  if (existsSync(cachedPromtool)) path = `${cachedPromtool}${delimiter}${path}`;
  const missing = tools.filter((tool) => !onPath(tool.command, path));
  if (missing.length === 0) return path;
  if (!isRoot()) {
    const names = missing.map((t) => `${t.command} (Debian package ${t.debianPackage}, for ${t.usedBy})`).join(", ");
    throw new Error(
      `system tools missing and not root to install them: ${names}; install with: apt-get install ${missing.map((t) => t.debianPackage).join(" ")}`,
    );
  }
  mkdirSync(unpacked, { recursive: true });
  const installs = missing.filter((t) => !t.unpackOnly);
  if (installs.length > 0) {
    log(`system tools: installing ${installs.map((t) => t.debianPackage).join(", ")} with apt-get (missing: ${installs.map((t) => t.command).join(", ")})`);
    apt(["install", "-y", "-qq", ...installs.map((t) => t.debianPackage)]);
  }
  for (const tool of missing.filter((t) => t.unpackOnly)) {
    log(`system tools: unpacking Debian's ${tool.debianPackage} into build/out/tools for ${tool.command}`);
    const bin = unpack(tool.debianPackage);
    if (bin) path = `${bin}${delimiter}${path}`;
  }
  const still = missing.filter((tool) => !onPath(tool.command, path));
  if (still.length > 0) throw new Error(`could not install ${still.map((t) => `${t.command} (Debian package ${t.debianPackage})`).join(", ")}`);
  return path;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  try {
    const path = ensureSystemTools();
    for (const tool of SYSTEM_TOOLS) process.stdout.write(`${tool.command}: ${onPath(tool.command, path) ? "ready" : "missing"}\n`);
    const extra = path.split(delimiter).filter((d) => d.startsWith(unpacked));
    if (extra.length > 0) process.stdout.write(`add to PATH for single test files: ${extra.join(delimiter)}\n`);
  } catch (error) {
    process.stderr.write(`system tools: ${error.message}\n`);
    process.exit(1);
  }
}
