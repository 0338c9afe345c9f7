// The orchestrator's rules for the OpenAPI v3 schema of a
// CustomResourceDefinition (apiextensions.k8s.io/v1 accepts only structural
// schemas): every node has a type unless it keeps unknown fields or is
// int-or-string; logical junctors (allOf, anyOf, oneOf, not) carry no
// type, description, default, additionalProperties or nullable and name only
// fields specified outside them; `metadata` may restrict only name and
// generateName; the JSON-Schema keywords the orchestrator refuses are absent;
// `x-kubernetes-*` extensions are the known ones, with values and types they
// allow. Returns one line per violation, with its path.

type Node = Record<string, unknown>;

const TYPES = new Set(["object", "array", "string", "integer", "number", "boolean"]);
const FORBIDDEN = ["$ref", "$schema", "id", "definitions", "dependencies", "patternProperties", "additionalItems"];
const JUNCTORS = ["allOf", "anyOf", "oneOf", "not"];
const NOT_IN_JUNCTORS = ["type", "description", "default", "additionalProperties", "nullable"];
const EXTENSIONS = new Set([
  "x-kubernetes-preserve-unknown-fields",
  "x-kubernetes-int-or-string",
  "x-kubernetes-embedded-resource",
  "x-kubernetes-list-type",
  "x-kubernetes-list-map-keys",
  "x-kubernetes-map-type",
  "x-kubernetes-validations",
]);

export function structuralSchemaErrors(root: Node): string[] {
  const errors: string[] = [];
  walk(root, "openAPIV3Schema", errors, true);
  const metadata = (root.properties as Node | undefined)?.metadata as Node | undefined;
  if (metadata) {
    const allowed = new Set(["type", "properties"]);
    for (const k of Object.keys(metadata))
      if (!allowed.has(k)) errors.push(`openAPIV3Schema.properties.metadata.${k}: only name and generateName may be restricted`);
    for (const k of Object.keys((metadata.properties as Node | undefined) ?? {})) {
      if (k !== "name" && k !== "generateName")
        errors.push(`openAPIV3Schema.properties.metadata.properties.${k}: only name and generateName may be restricted`);
    }
  }
  return errors;
}

function walk(node: unknown, path: string, errors: string[], needsType: boolean): void {
  if (typeof node !== "object" || node === null || Array.isArray(node)) {
    errors.push(`${path}: expected a schema object`);
    return;
  }
  const n = node as Node;
  const preserve = n["x-kubernetes-preserve-unknown-fields"] === true;
  const intOrString = n["x-kubernetes-int-or-string"] === true;
  if (needsType && !preserve && !intOrString && (typeof n.type !== "string" || n.type === "")) errors.push(`${path}: no type`);
  if (n.type !== undefined && !TYPES.has(String(n.type))) errors.push(`${path}.type: ${JSON.stringify(n.type)} is not an OpenAPI type`);
  if (intOrString && n.type !== undefined) errors.push(`${path}: x-kubernetes-int-or-string excludes a type`);
  for (const k of FORBIDDEN) if (k in n) errors.push(`${path}.${k}: not allowed in a CRD schema`);
  if (n.uniqueItems === true) errors.push(`${path}.uniqueItems: true is not allowed`);
  if (n.additionalProperties === false) errors.push(`${path}.additionalProperties: false is not allowed`);
  if (n.properties !== undefined && n.additionalProperties !== undefined) errors.push(`${path}: properties and additionalProperties exclude each other`);
  if (n.type === "array" && n.items === undefined) errors.push(`${path}: an array without items`);
  if (Array.isArray(n.enum)) {
    for (const v of n.enum) if (!matchesType(v, n.type)) errors.push(`${path}.enum: ${JSON.stringify(v)} is not of type ${String(n.type)}`);
  }
  for (const [k, v] of Object.entries(n)) {
    if (k.startsWith("x-") && !EXTENSIONS.has(k)) errors.push(`${path}.${k}: not an extension the orchestrator knows`);
    if ((k === "x-kubernetes-preserve-unknown-fields" || k === "x-kubernetes-int-or-string" || k === "x-kubernetes-embedded-resource") && v !== true)
      errors.push(`${path}.${k}: must be true when present`);
  }
  if (preserve && n.type !== undefined && n.type !== "object") errors.push(`${path}: x-kubernetes-preserve-unknown-fields on a ${String(n.type)}`);
  if (n["x-kubernetes-embedded-resource"] === true && n.type !== "object") errors.push(`${path}: x-kubernetes-embedded-resource needs type object`);
  if ("x-kubernetes-list-type" in n) {
    if (n.type !== "array") errors.push(`${path}: x-kubernetes-list-type needs type array`);
    if (!["atomic", "set", "map"].includes(String(n["x-kubernetes-list-type"]))) errors.push(`${path}.x-kubernetes-list-type: one of atomic, set, map`);
  }
  if ("x-kubernetes-list-map-keys" in n && n["x-kubernetes-list-type"] !== "map")
    errors.push(`${path}: x-kubernetes-list-map-keys needs x-kubernetes-list-type map`);
  if ("x-kubernetes-map-type" in n && (n.type !== "object" || !["granular", "atomic"].includes(String(n["x-kubernetes-map-type"]))))
    errors.push(`${path}: x-kubernetes-map-type is granular or atomic, on an object`);

  for (const [name, child] of Object.entries((n.properties as Node | undefined) ?? {})) walk(child, `${path}.properties.${name}`, errors, true);
  if (typeof n.additionalProperties === "object" && n.additionalProperties !== null) walk(n.additionalProperties, `${path}.additionalProperties`, errors, true);
  if (n.items !== undefined) walk(n.items, `${path}.items`, errors, true);
  for (const j of JUNCTORS) {
    if (!(j in n)) continue;
    const branches = j === "not" ? [n[j]] : Array.isArray(n[j]) ? (n[j] as unknown[]) : [];
    branches.forEach((b, i) => junctor(b, `${path}.${j}[${i}]`, n, errors));
  }
}

/** A junctor branch: only value restrictions, on fields the enclosing node specifies. */
function junctor(node: unknown, path: string, outside: Node, errors: string[]): void {
  if (typeof node !== "object" || node === null) return;
  const n = node as Node;
  for (const k of NOT_IN_JUNCTORS) if (k in n) errors.push(`${path}.${k}: not allowed inside allOf, anyOf, oneOf or not`);
  for (const name of Object.keys((n.properties as Node | undefined) ?? {})) {
    if (!Object.hasOwn((outside.properties as Node | undefined) ?? {}, name)) errors.push(`${path}.properties.${name}: not specified outside the junctor`);
  }
  if (n.items !== undefined && outside.items === undefined) errors.push(`${path}.items: not specified outside the junctor`);
}

function matchesType(value: unknown, type: unknown): boolean {
  if (type === "integer") return Number.isInteger(value);
  if (type === "number") return typeof value === "number";
  if (type === "array") return Array.isArray(value);
  if (type === "object") return typeof value === "object" && value !== null && !Array.isArray(value);
  return typeof value === type;
}
