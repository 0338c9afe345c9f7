import { readFileSync } from "node:fs";
import { parseYaml } from "../config/yaml.ts";
import { ConfigError } from "../config/errors.ts";
import { MESH_CONFIG_DEFAULTS, type MeshConfig, decodeMeshConfig } from "../config/mesh_config.ts";

/**
 * Mesh-wide settings of the sidecar (`disco-agent proxy --meshConfigFile`;
 * issue 6; security.md §2.1, §5.3, §6). Upstream's MeshConfig field names,
 * decoded by the one MeshConfig decoder (host/config/mesh_config.ts) into a
 * frozen value of the fields the sidecar uses; any other field is refused.
 */

export { OUTBOUND_TRAFFIC_POLICIES, type OutboundTrafficPolicy } from "../config/mesh_config.ts";

/** The MeshConfig fields the sidecar reads. */
const FIELDS = [
  "rootNamespace",
  "trustDomain",
  "enableAutoMtls",
  "outboundTrafficPolicy",
  "enableFallthroughRoute",
  "pathNormalization",
  "extensionProviders",
] as const;

/** The part of the MeshConfig the sidecar reads. */
export type MeshSettings = Pick<MeshConfig, (typeof FIELDS)[number]>;

function settingsOf(config: MeshSettings): MeshSettings {
  return Object.freeze(Object.fromEntries(FIELDS.map((f) => [f, config[f]]))) as unknown as MeshSettings;
}

export const DEFAULT_MESH_SETTINGS: MeshSettings = settingsOf(MESH_CONFIG_DEFAULTS);

/** A mesh configuration that cannot be used; the message names the file and field path. */
export class MeshConfigError extends Error {
  readonly code = "MESH_CONFIG_INVALID";
  constructor(
    readonly file: string,
    readonly fieldPath: string,
    why: string,
  ) {
    super(`${file}: ${fieldPath || "(document)"}: ${why}`);
  }
}

/**
 * Decodes mesh settings from YAML text. `outboundTrafficPolicy` takes the
 * upstream object form `{mode: REGISTRY_ONLY}` or the bare mode;
 * `pathNormalization` takes `{normalization: BASE}` or the bare value.
 *
 * @example parseMeshConfig("outboundTrafficPolicy: {mode: REGISTRY_ONLY}", "mesh.yaml").outboundTrafficPolicy // "REGISTRY_ONLY"
 */
export function parseMeshConfig(text: string, file: string): MeshSettings {
  let doc: unknown;
  try {
    doc = parseYaml(text);
  } catch (e) {
    throw new MeshConfigError(file, "", `not YAML: ${(e as Error).message.split("\n")[0]}`);
  }
  if (doc === null || doc === undefined) return DEFAULT_MESH_SETTINGS;
  try {
    return settingsOf(decodeMeshConfig(doc, file, { fields: FIELDS, otherFields: "refuse" }).config);
  } catch (e) {
    if (!(e instanceof ConfigError)) throw e;
    const fieldPath = e.fieldPath === "(document)" ? "" : e.fieldPath;
    const prefix = `${file}: ${e.fieldPath}: `;
    throw new MeshConfigError(file, fieldPath, e.message.startsWith(prefix) ? e.message.slice(prefix.length) : e.message);
  }
}

/** Reads and decodes `--meshConfigFile`. */
export function loadMeshConfig(file: string): MeshSettings {
  let text: string;
  try {
    text = readFileSync(file, "utf8");
  } catch (e) {
    throw new MeshConfigError(file, "", `cannot read: ${(e as Error).message}`);
  }
  return parseMeshConfig(text, file);
}
