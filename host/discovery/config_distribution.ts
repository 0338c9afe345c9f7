import type { SourceDocument } from "../config/documents.ts";
import { messageType } from "../wire/protos.ts";
import type { Resource } from "./resource_set.ts";
import { CONFIG_DOCUMENT } from "./type_urls.ts";

/** `<Kind>/<namespace>/<name>`: the name a document is distributed under. */
export function documentResourceName(d: Pick<SourceDocument, "kind" | "namespace" | "name">): string {
  return `${d.kind}/${d.namespace ?? ""}/${d.name}`;
}

/**
 * The documents of the configuration folder as ADS resources for our
 * sidecars (mesh.config.v1.ConfigDocument): each sidecar decodes them as it
 * decodes its own `--configDir`, so there is one decoder for both paths. A
 * later document of the same kind, namespace and name replaces an earlier
 * one, as applying the files in order would.
 */
export function configResources(documents: readonly SourceDocument[]): Map<string, Resource> {
  const type = messageType("mesh.config.v1.ConfigDocument");
  const out = new Map<string, Resource>();
  for (const d of documents) {
    const name = documentResourceName(d);
    const value = type.encode(type.fromObject({ source: d.file, index: d.index, json: JSON.stringify(d.body) })).finish();
    out.delete(name);
    out.set(name, { name, any: { type_url: CONFIG_DOCUMENT, value } });
  }
  return out;
}

/** The documents a sidecar received, back in their source form, in the control plane's order. */
export function documentsFromResources(resources: ReadonlyArray<{ type_url: string; value: Uint8Array }>): SourceDocument[] {
  const type = messageType("mesh.config.v1.ConfigDocument");
  return resources.map((r) => {
    const m = type.decode(r.value) as unknown as { source: string; index: number; json: string };
    const body = JSON.parse(m.json) as Record<string, unknown>;
    const metadata = (body.metadata ?? {}) as { name?: unknown; namespace?: unknown };
    return {
      file: m.source,
      index: m.index,
      apiVersion: String(body.apiVersion ?? ""),
      kind: String(body.kind ?? ""),
      name: String(metadata.name ?? ""),
      namespace: typeof metadata.namespace === "string" ? metadata.namespace : undefined,
      body,
    };
  });
}
