import { statSync } from "node:fs";
import { ConfigError } from "../config/errors.ts";
import { type InjectionSettings, decodeInjectionSettings } from "../inject/settings.ts";
import { isDnsDomain } from "../mesh/hosts.ts";
import { type ListenAddress, parseListenAddress } from "./listen_address.ts";
import { type DiscoveryMeshConfig, readDiscoveryMeshConfig } from "./mesh_config.ts";
import { NEVER_MS } from "./options.ts";
import { type SecureXdsSettings, secureXdsAvailable, secureXdsSettings } from "./secure_xds.ts";

/**
 * `disco-discovery discovery`'s flags as commander's parsers leave them
 * (each checked by its parser: addresses parse, durations are ms), besides
 * the logging flags; decoded once by decodeDiscoveryCommand.
 */
export interface DiscoveryFlags {
  configDir: string;
  grpcAddr: string;
  filterModule: string;
  secureGrpcAddr: string;
  caAddress: string;
  httpsAddr: string;
  httpAddr: string;
  monitoringAddr: string;
  profile: boolean;
  registries?: string[];
  keepaliveInterval: number;
  keepaliveTimeout: number;
  keepaliveMaxServerConnectionAge?: number;
  meshConfig: string;
  domain: string;
  trustDomain?: string;
  ctrlz_port: number;
  ctrlz_address: string;
}

/** A listener serving disco-discovery's mesh_ca certificate (`--secureGrpcAddr`, `--httpsAddr`). */
export interface CertifiedListener {
  address: ListenAddress;
  tls: SecureXdsSettings;
}

/** What the command runs with, decoded from the flags and variables (docs/discovery.md "Listeners and flags"). */
export interface DiscoveryCommand {
  configDir: string;
  /** `--domain`, lower-cased. */
  domain: string;
  mesh: DiscoveryMeshConfig;
  injection: InjectionSettings;
  /** `--trust-domain`, else the mesh config's. */
  trustDomain?: string;
  grpc?: ListenAddress;
  secureGrpc?: CertifiedListener;
  https?: CertifiedListener;
  http?: ListenAddress;
  monitoring?: ListenAddress;
  /** `--caAddress`: CreateCertificate is relayed to this mesh_ca. */
  caAddress?: string;
  profiling: boolean;
  keepaliveIntervalMs: number;
  keepaliveTimeoutMs: number;
  /** undefined: never (upstream's default, Go's largest duration). */
  maxConnectionAgeMs?: number;
  ctrlz: { address: string; port: number };
  filterModule: string;
  /** Lines to log at warn: what was given but has no effect, or is off. */
  warnings: string[];
  /** Lines to log at info. */
  notes: string[];
}

/** A flag or variable the command cannot run with: exit 2 with this message. */
export class DiscoveryFlagError extends Error {}

/**
 * Decodes the flags once; throws DiscoveryFlagError naming the flag or
 * variable. `fromCommandLine` says whether a flag was given (its default
 * then means a required file); `revision` (REVISION) is the injection
 * webhook's.
 */
export function decodeDiscoveryCommand(
  flags: DiscoveryFlags,
  fromCommandLine: (flag: keyof DiscoveryFlags) => boolean,
  env: NodeJS.ProcessEnv,
  revision?: string,
): DiscoveryCommand {
  const fail = (message: string): never => {
    throw new DiscoveryFlagError(message);
  };
  if (!flags.configDir) fail("--configDir: expected the directory of the mesh's configuration (no orchestrator API is reachable here)");
  if (!statSync(flags.configDir, { throwIfNoEntry: false })?.isDirectory()) fail(`--configDir: no such directory: ${flags.configDir}`);
  const domain = flags.domain.toLowerCase();
  if (!isDnsDomain(domain))
    fail(`--domain: expected a DNS domain such as cluster.local (dot-separated labels of letters, digits and '-'), got ${JSON.stringify(flags.domain)}`);
  let mesh: DiscoveryMeshConfig;
  let injection: InjectionSettings;
  const warnings: string[] = [];
  const notes: string[] = [];
  const injectionWarnings: string[] = [];
  try {
    mesh = readDiscoveryMeshConfig(flags.meshConfig, fromCommandLine("meshConfig"));
    injection = decodeInjectionSettings(mesh.file ? { meshConfig: { file: mesh.file, value: mesh.value } } : {}, injectionWarnings, domain, revision);
  } catch (e) {
    if (!(e instanceof ConfigError)) throw e;
    return fail(`--meshConfig: ${e.message}`);
  }
  const trustDomain = flags.trustDomain || mesh.trustDomain;
  if (trustDomain !== undefined && !/^[A-Za-z0-9]([A-Za-z0-9.-]*[A-Za-z0-9])?$/.test(trustDomain))
    fail(`--trust-domain: expected a trust domain (a DNS name), got ${JSON.stringify(trustDomain)}`);
  // --secureGrpcAddr and --httpsAddr serve disco-discovery's mesh_ca certificate (DISCO_CERT_DIR).
  const certified = (flag: "secureGrpcAddr" | "httpsAddr"): CertifiedListener | undefined => {
    const address = parseListenAddress(flags[flag]);
    let tls: SecureXdsSettings;
    try {
      tls = secureXdsSettings(env, fromCommandLine(flag));
    } catch (e) {
      return fail((e as Error).message);
    }
    if (address && !secureXdsAvailable(tls)) {
      warnings.push(`--${flag} ${flags[flag]}: no certificate at ${tls.files.certFile} (DISCO_CERT_DIR): this listener is off`);
      return undefined;
    }
    return address ? { address, tls } : undefined;
  };
  const secureGrpc = certified("secureGrpcAddr");
  const https = certified("httpsAddr");
  if (flags.caAddress && !secureGrpc) warnings.push(`--caAddress ${flags.caAddress}: no effect without --secureGrpcAddr (certificates are served there)`);
  if (mesh.file) notes.push(`mesh config ${mesh.file}: rootNamespace ${mesh.rootNamespace}${mesh.trustDomain ? `, trustDomain ${mesh.trustDomain}` : ""}`);
  if (mesh.ignored.length > 0)
    warnings.push(
      `--meshConfig ${mesh.file}: ${mesh.ignored.join(", ")}: no effect on disco-discovery (it reads rootNamespace, trustDomain, extensionProviders and enableAutoMtls; defaultConfig goes to the injection webhook)`,
    );
  for (const w of injectionWarnings) warnings.push(`--meshConfig: ${w}`);
  const age = flags.keepaliveMaxServerConnectionAge;
  return {
    configDir: flags.configDir,
    domain,
    mesh,
    injection,
    ...(trustDomain ? { trustDomain } : {}),
    grpc: parseListenAddress(flags.grpcAddr),
    secureGrpc,
    https,
    http: parseListenAddress(flags.httpAddr),
    monitoring: parseListenAddress(flags.monitoringAddr),
    ...(flags.caAddress ? { caAddress: flags.caAddress } : {}),
    profiling: flags.profile,
    keepaliveIntervalMs: flags.keepaliveInterval,
    keepaliveTimeoutMs: flags.keepaliveTimeout,
    ...(age !== undefined && age < NEVER_MS ? { maxConnectionAgeMs: age } : {}),
    ctrlz: { address: flags.ctrlz_address, port: flags.ctrlz_port },
    filterModule: flags.filterModule,
    warnings,
    notes,
  };
}
