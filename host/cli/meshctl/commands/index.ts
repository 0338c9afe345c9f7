import type { Command } from "commander";
import { registerHubEval } from "./hub_eval.ts";
import { registerValidate } from "./validate.ts";
import { registerVersion } from "./version.ts";
import { registerOrchInject } from "./orch_inject.ts";
import { registerConvertIngress } from "./convert_ingress.ts";
import { registerAnalyze } from "./analyze.ts";
import { registerAuthn } from "./authn.ts";
import { registerAuthz } from "./authz.ts";
import { registerProxyConfig } from "./proxy_config.ts";
import { registerProxyStatus } from "./proxy_status.ts";
import { registerSimulate } from "./simulate.ts";
import { registerEnvoyBootstrap } from "./envoy_bootstrap.ts";
import { registerUnavailableCommands } from "./orchestrator_only.ts";

/**
 * Every meshctl command, registered on the program (top-level commands) or on
 * `experimental` (alias `x`). One file per command under this folder; add a
 * line here to register a new one.
 */
export function registerCommands(program: Command, experimental: Command): void {
  registerHubEval(experimental);
  registerValidate(program);
  registerVersion(program);
  registerOrchInject(program);
  registerConvertIngress(program, experimental);
  registerAnalyze(program, experimental);
  registerAuthn(program);
  registerAuthz(program, experimental);
  registerProxyConfig(program);
  registerProxyStatus(program);
  registerSimulate(experimental);
  registerEnvoyBootstrap(experimental);
  // Last: they join groups registered above (`x authz`).
  registerUnavailableCommands(program, experimental);
}
