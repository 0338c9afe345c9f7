// The orchestrator's own OpenAPI schemas for its built-in kinds (Deployment,
// Service, ClusterRole, CustomResourceDefinition, webhook configurations …),
// as the kubernetes-models package compiles them from the orchestrator's
// published OpenAPI document. A test checks an object as the API server's
// schema validation would, without an API server.

type Obj = Record<string, unknown>;

/** The schema errors of one object (empty when it validates); an unknown apiVersion/kind is an error too. */
export async function orchSchemaErrors(object: Obj): Promise<string[]> {
  const apiVersion = String(object.apiVersion ?? "");
  const kind = String(object.kind ?? "");
  const [group, version] = apiVersion.includes("/") ? apiVersion.split("/") : ["", apiVersion];
  let model: new (data: Obj) => { validate(): void };
  try {
    const module = (await import(`kubernetes-models/${group ? `${group}/` : ""}${version}/${kind}`)) as Record<string, typeof model>;
    model = module[kind];
  } catch {
    return [`${apiVersion} ${kind}: not a built-in kind of the orchestrator`];
  }
  try {
    new model(object).validate();
    return [];
  } catch (e) {
    return String((e as Error).message)
      .split(", ")
      .map((m) => `${kind} ${String((object.metadata as Obj | undefined)?.name)}: ${m}`);
  }
}
