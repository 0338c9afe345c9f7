import type { Command } from "commander";
import type { MeshctlIo } from "../io.ts";
import { registerUnavailableCommands } from "./orchestrator_only.ts";

/** Adds one command module's commands to the program or to `experimental` (alias `x`); they read and write through `io`. */
export type RegisterCommands = (program: Command, experimental: Command, io: MeshctlIo) => void;
type Load = () => Promise<RegisterCommands>;

const proxyConfig: Load = async () => (await import("./proxy_config.ts")).registerProxyConfig;
const orchInject: Load = async () => (await import("./orch_inject.ts")).registerOrchInject;
const proxyStatus: Load = async () => (await import("./proxy_status.ts")).registerProxyStatus;

/**
 * Every meshctl command module, by each word that names one of its commands
 * (aliases included), in the order `--help` lists them. A module is imported
 * only when it runs: `meshctl version` need not load the CA, gRPC and the
 * filter module that `x simulate` uses (each module's imports go to its own
 * chunk of build/out). One file per command under this folder; add a line
 * here to register a new one. A loader returns a function of (program,
 * experimental, io): wrap a register function that takes `experimental` only.
 */
export const COMMANDS: Readonly<Record<string, Load>> = {
  "hub-eval": async () => {
    const { registerHubEval } = await import("./hub_eval.ts");
    return (_, experimental, io) => registerHubEval(experimental, io);
  },
  validate: async () => (await import("./validate.ts")).registerValidate,
  version: async () => (await import("./version.ts")).registerVersion,
  "orch-inject": orchInject,
  "kube-inject": orchInject,
  "convert-ingress": async () => (await import("./convert_ingress.ts")).registerConvertIngress,
  analyze: async () => (await import("./analyze.ts")).registerAnalyze,
  authn: async () => (await import("./authn.ts")).registerAuthn,
  authz: async () => (await import("./authz.ts")).registerAuthz,
  manifest: async () => (await import("./manifest.ts")).registerManifest,
  "proxy-config": proxyConfig,
  pc: proxyConfig,
  "proxy-status": proxyStatus,
  ps: proxyStatus,
  simulate: async () => {
    const { registerSimulate } = await import("./simulate.ts");
    return (_, experimental, io) => registerSimulate(experimental, io);
  },
  wait: async () => {
    const { registerWait } = await import("./wait.ts");
    return (_, experimental, io) => registerWait(experimental, io);
  },
  "envoy-bootstrap": async () => {
    const { registerEnvoyBootstrap } = await import("./envoy_bootstrap.ts");
    return (_, experimental, io) => registerEnvoyBootstrap(experimental, io);
  },
};

/**
 * The loaders of the modules a command line can run: those named by one of
 * its words (a flag's value that happens to be a command name only loads one
 * module more); every module when none is named (`--help`, `help`, a typo, no
 * command), so listings and suggestions are complete.
 */
export function loadersFor(args: readonly string[]): Load[] {
  const named = new Set(args.filter((a) => Object.hasOwn(COMMANDS, a)).map((a) => COMMANDS[a]));
  const all = new Set(Object.values(COMMANDS));
  return [...all].filter((load) => named.size === 0 || named.has(load));
}

/**
 * Registers the meshctl commands that `args` (the command line after the
 * program) can run on the program (top-level commands) or on `experimental`.
 */
export async function registerCommands(program: Command, experimental: Command, args: readonly string[], io: MeshctlIo): Promise<void> {
  const registers = await Promise.all(loadersFor(args).map((load) => load()));
  for (const register of registers) register(program, experimental, io);
  // Last: they join groups registered above (`x authz`). They cost nothing to load.
  registerUnavailableCommands(program, experimental, io);
}
