import { ApiKeyIn, ApiKeyLocation } from "../api_key";
import { ApiPattern, CompiledApiSpec } from "../api_spec";
import { encodeForwardedAttributes } from "../proto/forwarded";
import { JsonValue, parseJson } from "../json";
import { RegexSet } from "../regex/index";
import { parseUriTemplate, UriTemplate } from "../template/index";
import { readAttributes } from "./attributes_json";
import {
  ClientConfig,
  DEFAULT_MESH_DOMAIN_SUFFIX,
  ServiceConfig,
} from "./client_config";
import { readQuotaSpec } from "./quota_spec_json";
import { ConfigReader } from "./reader";
import { readTcpClientConfig } from "./tcp_client_config";
import { readFailPolicy, readTransport } from "./transport_json";

// Compiles the plugin configuration, one JSON document:
//   { "httpClientConfig": <HttpClientConfig, camelCase>,
//     "tcpClientConfig": <TcpClientConfig, camelCase>,
//     "resources": [ HTTPAPISpec | HTTPAPISpecBinding | QuotaSpec | QuotaSpecBinding documents ] }
// into a read-only ClientConfig. Bindings attach their specs to the services
// they name (creating a ServiceConfig where none is configured). The first
// problem is returned with its field path; nothing is partially applied.
// Warnings (accepted as upstream accepts them) come back beside the config.

export class CompileResult {
  constructor(
    public config: ClientConfig | null,
    public error: string,
    /** Accepted but worth telling the operator (e.g. a duplicate pattern that never matches). */
    public warnings: Array<string> = [],
  ) {}
}

const DEFAULT_NAMESPACE = "default";

/** A spec body to compile for a service, with the path used in errors. */
class SpecSource {
  constructor(
    public body: JsonValue,
    public path: string,
  ) {}
}

class Resource {
  constructor(
    public kind: string,
    public namespace: string,
    public name: string,
    public spec: JsonValue | null,
    public path: string,
  ) {}
}

class ServiceSources {
  apiSpecs: Array<SpecSource> = [];
  quotaSpecs: Array<SpecSource> = [];
}

export function compileConfig(text: string): CompileResult {
  const parsed = parseJson(text);
  if (parsed.value === null) return new CompileResult(null, "configuration: " + parsed.error);
  const r = new ConfigReader();
  const root = r.object(parsed.value, "configuration");
  if (root === null) return new CompileResult(null, r.error);
  for (let i = 0; i < root.keys.length; i++) {
    const k = root.keys[i];
    if (k != "httpClientConfig" && k != "tcpClientConfig" && k != "resources") {
      r.fail(k, "unknown field (expected httpClientConfig, tcpClientConfig, resources)");
    }
  }
  const config = new ClientConfig();
  const sources = new Map<string, ServiceSources>();
  readClientConfig(r, r.object(r.member(root, "httpClientConfig"), "httpClientConfig"), config, sources);
  config.tcp = readTcpClientConfig(r, r.member(root, "tcpClientConfig"), "tcpClientConfig");
  const resources = readResources(r, r.member(root, "resources"));
  bindSpecs(r, resources, "HTTPAPISpecBinding", "HTTPAPISpec", "apiSpecs", config, sources);
  bindSpecs(r, resources, "QuotaSpecBinding", "QuotaSpec", "quotaSpecs", config, sources);
  config.forwardHeader = encodeForwardedAttributes(config.forwardAttributes);
  for (let i = 0; i < config.serviceNames.length && !r.failed; i++) {
    const name = config.serviceNames[i];
    const service = config.services.get(name);
    const forward = config.forwardAttributes.clone();
    forward.merge(service.forwardAttributes);
    service.forwardHeader = encodeForwardedAttributes(forward);
    const src = sources.get(name);
    compileApiSpec(r, src.apiSpecs, service.apiSpec);
    for (let j = 0; j < src.quotaSpecs.length; j++) readQuotaSpec(r, src.quotaSpecs[j].body, src.quotaSpecs[j].path, service.quotaRules);
  }
  if (r.failed) return new CompileResult(null, r.error, r.warnings);
  return new CompileResult(config, "", r.warnings);
}

function ensureService(config: ClientConfig, sources: Map<string, ServiceSources>, name: string): ServiceConfig {
  if (!config.services.has(name)) {
    config.services.set(name, new ServiceConfig());
    config.serviceNames.push(name);
    sources.set(name, new ServiceSources());
  }
  return config.services.get(name);
}

function readClientConfig(r: ConfigReader, obj: JsonValue | null, config: ClientConfig, sources: Map<string, ServiceSources>): void {
  if (obj === null) return;
  const p = "httpClientConfig";
  config.transport = readTransport(r, r.object(r.member(obj, "transport"), p + ".transport"), p + ".transport");
  config.defaultDestinationService = r.string(r.member(obj, "defaultDestinationService"), p + ".defaultDestinationService");
  config.hubAttributes = readAttributes(r, r.member(obj, "hubAttributes"), p + ".hubAttributes");
  config.forwardAttributes = readAttributes(r, r.member(obj, "forwardAttributes"), p + ".forwardAttributes");
  config.ignoreForwardedAttributes = r.bool(r.member(obj, "ignoreForwardedAttributes"), p + ".ignoreForwardedAttributes");
  const services = r.object(r.member(obj, "serviceConfigs"), p + ".serviceConfigs");
  if (services === null) return;
  for (let i = 0; i < services.keys.length; i++) {
    const name = services.keys[i];
    const sp = p + ".serviceConfigs[" + name + "]";
    const body = r.object(services.values[i], sp);
    const service = ensureService(config, sources, name);
    if (body === null) continue;
    service.disableCheckCalls = r.bool(r.member(body, "disableCheckCalls"), sp + ".disableCheckCalls");
    service.disableReportCalls = r.bool(r.member(body, "disableReportCalls"), sp + ".disableReportCalls");
    service.hubAttributes = readAttributes(r, r.member(body, "hubAttributes"), sp + ".hubAttributes");
    service.forwardAttributes = readAttributes(r, r.member(body, "forwardAttributes"), sp + ".forwardAttributes");
    const policy = r.object(r.member(body, "networkFailPolicy"), sp + ".networkFailPolicy");
    if (policy !== null) service.networkFailPolicy = readFailPolicy(r, policy, sp + ".networkFailPolicy");
    const src = sources.get(name);
    const specs = r.array(r.member(body, "httpApiSpec"), sp + ".httpApiSpec");
    for (let j = 0; j < specs.length; j++) src.apiSpecs.push(new SpecSource(specs[j], sp + ".httpApiSpec[" + j.toString() + "]"));
    const quotas = r.array(r.member(body, "quotaSpec"), sp + ".quotaSpec");
    for (let j = 0; j < quotas.length; j++) src.quotaSpecs.push(new SpecSource(quotas[j], sp + ".quotaSpec[" + j.toString() + "]"));
  }
}

function readResources(r: ConfigReader, v: JsonValue | null): Array<Resource> {
  const out = new Array<Resource>();
  const items = r.array(v, "resources");
  for (let i = 0; i < items.length; i++) {
    const at = "resources[" + i.toString() + "]";
    const doc = r.object(items[i], at);
    if (doc === null) continue;
    const kind = r.string(r.member(doc, "kind"), at + ".kind");
    const meta = r.object(r.member(doc, "metadata"), at + ".metadata");
    const name = r.string(r.member(meta, "name"), at + ".metadata.name");
    const namespace = r.string(r.member(meta, "namespace"), at + ".metadata.namespace", DEFAULT_NAMESPACE);
    if (name.length == 0) r.fail(at + ".metadata.name", "expected a non-empty name");
    if (kind != "HTTPAPISpec" && kind != "HTTPAPISpecBinding" && kind != "QuotaSpec" && kind != "QuotaSpecBinding") {
      r.fail(at + ".kind", "expected HTTPAPISpec, HTTPAPISpecBinding, QuotaSpec or QuotaSpecBinding");
      continue;
    }
    const label = at + " (" + kind + " " + namespace + "/" + name + ")";
    out.push(new Resource(kind, namespace, name, r.object(r.member(doc, "spec"), label + ".spec"), label + ".spec"));
  }
  return out;
}

/** `<service>.<namespace>.<domain>` of a MeshService, or its `service` FQDN. */
function meshServiceFqdn(r: ConfigReader, obj: JsonValue | null, defaultNamespace: string, p: string): string {
  if (obj === null) return "";
  const fqdn = r.string(r.member(obj, "service"), p + ".service");
  if (fqdn.length > 0) return fqdn;
  const name = r.string(r.member(obj, "name"), p + ".name");
  if (name.length == 0) {
    r.fail(p, "expected name or service");
    return "";
  }
  const namespace = r.string(r.member(obj, "namespace"), p + ".namespace", defaultNamespace);
  const domain = r.string(r.member(obj, "domain"), p + ".domain", DEFAULT_MESH_DOMAIN_SUFFIX);
  return name + "." + (namespace.length > 0 ? namespace : defaultNamespace) + "." + domain;
}

function bindSpecs(
  r: ConfigReader,
  resources: Array<Resource>,
  bindingKind: string,
  specKind: string,
  referencesField: string,
  config: ClientConfig,
  sources: Map<string, ServiceSources>,
): void {
  // Every spec bound to a service, whichever binding named it, applies once,
  // in namespace/name order (the control plane collected them into a set
  // sorted by key).
  const boundServices = new Array<string>();
  const boundSpecs = new Map<string, Array<Resource>>();
  for (let i = 0; i < resources.length; i++) {
    const b = resources[i];
    if (b.kind != bindingKind || b.spec === null) continue;
    const services = r.array(r.member(b.spec, "services"), b.path + ".services");
    const refs = r.array(r.member(b.spec, referencesField), b.path + "." + referencesField);
    if (services.length == 0) r.fail(b.path + ".services", "expected at least one service");
    if (refs.length == 0) r.fail(b.path + "." + referencesField, "expected at least one reference");
    const targets = new Array<Resource>();
    for (let j = 0; j < refs.length; j++) {
      const rp = b.path + "." + referencesField + "[" + j.toString() + "]";
      const ref = r.object(refs[j], rp);
      const name = r.string(r.member(ref, "name"), rp + ".name");
      const namespace = r.string(r.member(ref, "namespace"), rp + ".namespace", b.namespace);
      const target = findResource(resources, specKind, namespace.length > 0 ? namespace : b.namespace, name);
      if (target === null) r.fail(rp, "references " + specKind + " " + namespace + "/" + name + ", which is not defined");
      else targets.push(target as Resource);
    }
    for (let j = 0; j < services.length; j++) {
      const sp = b.path + ".services[" + j.toString() + "]";
      const fqdn = meshServiceFqdn(r, r.object(services[j], sp), b.namespace, sp);
      if (fqdn.length == 0) continue;
      if (!boundSpecs.has(fqdn)) {
        boundSpecs.set(fqdn, new Array<Resource>());
        boundServices.push(fqdn);
      }
      const list = boundSpecs.get(fqdn);
      for (let k = 0; k < targets.length; k++) {
        if (list.indexOf(targets[k]) < 0) list.push(targets[k]);
      }
    }
  }
  for (let i = 0; i < boundServices.length; i++) {
    const fqdn = boundServices[i];
    const list = boundSpecs.get(fqdn);
    list.sort((x: Resource, y: Resource): i32 => {
      const a = x.namespace + "/" + x.name;
      const c = y.namespace + "/" + y.name;
      return a < c ? -1 : a > c ? 1 : 0;
    });
    ensureService(config, sources, fqdn);
    const src = sources.get(fqdn);
    const into = specKind == "HTTPAPISpec" ? src.apiSpecs : src.quotaSpecs;
    for (let k = 0; k < list.length; k++) {
      const spec = list[k].spec;
      if (spec !== null) into.push(new SpecSource(spec as JsonValue, list[k].path));
    }
  }
}

function findResource(resources: Array<Resource>, kind: string, namespace: string, name: string): Resource | null {
  for (let i = 0; i < resources.length; i++) {
    const x = resources[i];
    if (x.kind == kind && x.namespace == namespace && x.name == name) return x;
  }
  return null;
}

function compileApiSpec(r: ConfigReader, specs: Array<SpecSource>, out: CompiledApiSpec): void {
  const regexTexts = new Array<string>();
  const regexPaths = new Array<string>();
  for (let s = 0; s < specs.length; s++) {
    const p = specs[s].path;
    const body = r.object(specs[s].body, p);
    if (body === null) return;
    out.specAttributes.merge(readAttributes(r, r.member(body, "attributes"), p + ".attributes"));
    const patterns = r.array(r.member(body, "patterns"), p + ".patterns");
    for (let i = 0; i < patterns.length; i++) {
      const pp = p + ".patterns[" + i.toString() + "]";
      const pat = r.object(patterns[i], pp);
      if (pat === null) continue;
      const attributes = readAttributes(r, r.member(pat, "attributes"), pp + ".attributes");
      let method = r.string(r.member(pat, "httpMethod"), pp + ".httpMethod");
      // The spec marks httpMethod optional: absent matches any method.
      if (method.length == 0) method = "*";
      const template = r.member(pat, "uriTemplate");
      const regex = r.member(pat, "regex");
      if ((template === null) == (regex === null)) {
        r.fail(pp, "expected exactly one of uriTemplate, regex");
        continue;
      }
      const index = out.patterns.length;
      if (template !== null) {
        const text = r.string(template, pp + ".uriTemplate");
        const parsed = parseUriTemplate(text);
        if (parsed.template === null) {
          r.fail(pp + ".uriTemplate", parsed.error);
          continue;
        }
        // Upstream's matcher keeps the first registration of a (method,
        // template shape) and skips later ones with a warning.
        if (!out.templates.insert(method, parsed.template as UriTemplate, index)) {
          r.warn(pp + ".uriTemplate", "\"" + text + "\" with method " + method + " duplicates an earlier pattern with the same method and template shape; the earlier one wins and this one never matches");
          continue;
        }
        out.patterns.push(new ApiPattern(attributes, method, text, false));
      } else {
        const text = r.string(regex, pp + ".regex");
        regexTexts.push(text);
        regexPaths.push(pp + ".regex");
        out.regexPatterns.push(index);
        out.patterns.push(new ApiPattern(attributes, method, text, true));
      }
    }
    const keys = r.array(r.member(body, "apiKeys"), p + ".apiKeys");
    for (let i = 0; i < keys.length; i++) {
      const kp = p + ".apiKeys[" + i.toString() + "]";
      const key = r.object(keys[i], kp);
      if (key === null) continue;
      const query = r.member(key, "query");
      const header = r.member(key, "header");
      const cookie = r.member(key, "cookie");
      const given = (query !== null ? 1 : 0) + (header !== null ? 1 : 0) + (cookie !== null ? 1 : 0);
      if (given != 1 || key.keys.length != 1) {
        r.fail(kp, "expected exactly one of query, header, cookie");
        continue;
      }
      if (query !== null) out.apiKeys.push(new ApiKeyLocation(ApiKeyIn.Query, r.string(query, kp + ".query")));
      else if (header !== null) out.apiKeys.push(new ApiKeyLocation(ApiKeyIn.Header, r.string(header, kp + ".header").toLowerCase()));
      else out.apiKeys.push(new ApiKeyLocation(ApiKeyIn.Cookie, r.string(cookie, kp + ".cookie")));
    }
  }
  if (regexTexts.length > 0 && !r.failed) {
    const compiled = RegexSet.compile(regexTexts);
    if (compiled.set === null) {
      const at = compiled.failedIndex >= 0 && compiled.failedIndex < regexPaths.length ? regexPaths[compiled.failedIndex] : "regex";
      r.fail(at, compiled.error);
    } else out.regexes = compiled.set;
  }
}

