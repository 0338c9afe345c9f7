// compileConfig: the plugin configuration (HttpClientConfig + bound
// HTTPAPISpec/QuotaSpec resources) into a ClientConfig. Defaults from
// hub-client §8; binding rules from the control plane (§3.8, §10); every
// error names its field path.
import { ApiKeyIn } from "../../assembly/api_key";
import { AttributeBag } from "../../assembly/attributes/bag";
import { compileConfig } from "../../assembly/config/compile";
import {
  ClientConfig, DEFAULT_BASE_RETRY_WAIT_NS, DEFAULT_CLUSTER, DEFAULT_MAX_RETRY_WAIT_NS,
  DEFAULT_REPORT_BATCH_MAX_ENTRIES, DEFAULT_REPORT_BATCH_MAX_TIME_NS, DEFAULT_STATS_UPDATE_INTERVAL_NS, ServiceConfig,
} from "../../assembly/config/client_config";

// Configuration text written with ' for " to keep the rows readable.
function q(s: string): string {
  return s.replaceAll("'", "\"");
}

function compiled(text: string): ClientConfig {
  const r = compileConfig(q(text));
  expect(r.error).toBe("", text);
  expect(r.config).not.toBeNull(text);
  return r.config!;
}

function compileError(text: string): string {
  const r = compileConfig(q(text));
  expect(r.config).toBeNull(text);
  return r.error;
}

function expectError(text: string, prefix: string): void {
  const e = compileError(text);
  expect(e.startsWith(prefix)).toBe(true, "got: " + e);
}

function service(c: ClientConfig, name: string): ServiceConfig {
  expect(c.services.has(name)).toBe(true, name);
  return c.services.get(name);
}

function doc(kind: string, ns: string, name: string, spec: string): string {
  return "{'apiVersion':'config.mesh.io/v1alpha2','kind':'" + kind + "','metadata':{'name':'" + name + "'" +
    (ns.length > 0 ? ",'namespace':'" + ns + "'" : "") + "},'spec':" + spec + "}";
}

function withResources(docs: string[]): string {
  return "{'resources':[" + docs.join(",") + "]}";
}

const PETSTORE = "petstore.default.svc.cluster.local";

describe("compileConfig defaults (hub-client §8)", () => {
  it("applies the upstream defaults to an empty configuration", () => {
    const c = compiled("{}");
    const t = c.transport;
    expect(t.checkCluster).toBe("hub_server");
    expect(t.reportCluster).toBe("hub_server");
    expect(DEFAULT_CLUSTER).toBe("hub_server");
    expect(t.reportBatchMaxEntries).toBe(100);
    expect(t.reportBatchMaxTimeNanos).toBe(1_000_000_000);
    expect(t.statsUpdateIntervalNanos).toBe(10_000_000_000);
    expect(t.networkFailPolicy.failClose).toBe(false);
    expect(t.networkFailPolicy.maxRetry).toBe(0);
    expect(t.networkFailPolicy.baseRetryWaitNanos).toBe(80_000_000);
    expect(t.networkFailPolicy.maxRetryWaitNanos).toBe(1_000_000_000);
    expect(t.disableCheckCache).toBe(false);
    expect(t.disableQuotaCache).toBe(false);
    expect(t.disableReportBatch).toBe(false);
    expect(c.ignoreForwardedAttributes).toBe(false);
    expect(c.serviceNames.length).toBe(0);
    expect(c.serviceFor("anything")).toBeNull();
    // the named constants carry the same values
    expect(DEFAULT_REPORT_BATCH_MAX_ENTRIES).toBe(100);
    expect(DEFAULT_REPORT_BATCH_MAX_TIME_NS).toBe(1_000_000_000);
    expect(DEFAULT_STATS_UPDATE_INTERVAL_NS).toBe(10_000_000_000);
    expect(DEFAULT_BASE_RETRY_WAIT_NS).toBe(80_000_000);
    expect(DEFAULT_MAX_RETRY_WAIT_NS).toBe(1_000_000_000);
  });

  it("falls back to the defaults for zero batch settings and a non-positive stats interval", () => {
    const c = compiled("{'httpClientConfig':{'transport':{'reportBatchMaxEntries':0,'reportBatchMaxTime':'0s','statsUpdateInterval':'0s'}}}");
    expect(c.transport.reportBatchMaxEntries).toBe(100);
    expect(c.transport.reportBatchMaxTimeNanos).toBe(1_000_000_000);
    expect(c.transport.statsUpdateIntervalNanos).toBe(10_000_000_000);
    const n = compiled("{'httpClientConfig':{'transport':{'statsUpdateInterval':'-1s'}}}");
    expect(n.transport.statsUpdateIntervalNanos).toBe(10_000_000_000);
  });

  it("keeps configured retry waits and fills the unset one from the defaults", () => {
    const c = compiled("{'httpClientConfig':{'transport':{'networkFailPolicy':{'policy':'FAIL_CLOSE','maxRetry':3,'baseRetryWait':'0.1s'}}}}");
    const p = c.transport.networkFailPolicy;
    expect(p.failClose).toBe(true);
    expect(p.maxRetry).toBe(3);
    expect(p.baseRetryWaitNanos).toBe(100_000_000);
    expect(p.maxRetryWaitNanos).toBe(1_000_000_000);
  });
});

describe("compileConfig HttpClientConfig", () => {
  it("reads transport, attributes and service configs", () => {
    const c = compiled("{'httpClientConfig':{" +
      "'transport':{'disableCheckCache':true,'disableQuotaCache':true,'disableReportBatch':true,'checkCluster':'c1','reportCluster':'r1'," +
      "'reportBatchMaxEntries':'7','reportBatchMaxTime':'250ms','statsUpdateInterval':'30s'," +
      "'attributesForHubProxy':{'attributes':{'source.uid':{'stringValue':'kubernetes://gw.istio-system'}}}}," +
      "'defaultDestinationService':'default'," +
      "'hubAttributes':{'attributes':{'context.reporter.kind':{'stringValue':'inbound'}}}," +
      "'forwardAttributes':{'attributes':{'source.uid':{'stringValue':'kubernetes://a.b'}}}," +
      "'ignoreForwardedAttributes':true," +
      "'serviceConfigs':{'default':{'disableCheckCalls':true,'disableReportCalls':true," +
      "'hubAttributes':{'attributes':{'destination.service.name':{'stringValue':'svc'}}}," +
      "'forwardAttributes':{'attributes':{'destination.service.host':{'stringValue':'svc.ns'}}}}}}}");
    const t = c.transport;
    expect(t.disableCheckCache).toBe(true);
    expect(t.disableQuotaCache).toBe(true);
    expect(t.disableReportBatch).toBe(true);
    expect(t.checkCluster).toBe("c1");
    expect(t.reportCluster).toBe("r1");
    expect(t.reportBatchMaxEntries).toBe(7);
    expect(t.reportBatchMaxTimeNanos).toBe(250_000_000);
    expect(t.statsUpdateIntervalNanos).toBe(30_000_000_000);
    expect(t.attributesForHubProxy.getString("source.uid")).toBe("kubernetes://gw.istio-system");
    expect(c.defaultDestinationService).toBe("default");
    expect(c.hubAttributes.getString("context.reporter.kind")).toBe("inbound");
    expect(c.forwardAttributes.getString("source.uid")).toBe("kubernetes://a.b");
    expect(c.ignoreForwardedAttributes).toBe(true);
    const s = service(c, "default");
    expect(s.disableCheckCalls).toBe(true);
    expect(s.disableReportCalls).toBe(true);
    expect(s.hubAttributes.getString("destination.service.name")).toBe("svc");
    expect(s.forwardAttributes.getString("destination.service.host")).toBe("svc.ns");
    expect(s.networkFailPolicy).toBeNull();
  });

  it("resolves the destination service, falling back to defaultDestinationService", () => {
    const c = compiled("{'httpClientConfig':{'defaultDestinationService':'fallback','serviceConfigs':{'a':{},'fallback':{}}}}");
    expect(c.serviceFor("a")).toBe(service(c, "a"));
    expect(c.serviceFor("unknown")).toBe(service(c, "fallback"));
    expect(c.serviceFor("")).toBe(service(c, "fallback"));
    const none = compiled("{'httpClientConfig':{'defaultDestinationService':'missing','serviceConfigs':{'a':{}}}}");
    expect(none.serviceFor("unknown")).toBeNull();
    expect(none.serviceFor("a")).not.toBeNull();
  });

  it("lets a service-level NetworkFailPolicy override the transport's (the spec's rule)", () => {
    const c = compiled("{'httpClientConfig':{'transport':{'networkFailPolicy':{'policy':'FAIL_OPEN'}}," +
      "'serviceConfigs':{'strict':{'networkFailPolicy':{'policy':'FAIL_CLOSE','maxRetry':2}},'loose':{}}}}");
    expect(c.failPolicyFor(service(c, "strict")).failClose).toBe(true);
    expect(c.failPolicyFor(service(c, "strict")).maxRetry).toBe(2);
    expect(c.failPolicyFor(service(c, "loose")).failClose).toBe(false);
    expect(c.failPolicyFor(null)).toBe(c.transport.networkFailPolicy);
  });

  it("compiles inline httpApiSpec and quotaSpec of a service config", () => {
    const c = compiled("{'httpClientConfig':{'serviceConfigs':{'s':{" +
      "'httpApiSpec':[{'patterns':[{'httpMethod':'GET','uriTemplate':'/a'}]}]," +
      "'quotaSpec':[{'rules':[{'quotas':[{'quota':'rq'}]}]}]}}}}");
    const s = service(c, "s");
    expect(s.apiSpec.patterns.length).toBe(1);
    expect(s.quotaRules.length).toBe(1);
    expect(s.quotaRules[0].quotas[0].quota).toBe("rq");
  });

  it("names the field path of every HttpClientConfig error", () => {
    const rows: string[][] = [
      ["[]", "configuration: expected an object"],
      ["{'httpClientConfig':{},'extra':1}", "extra: unknown field"],
      ["{'httpClientConfig':[]}", "httpClientConfig: expected an object"],
      ["{'httpClientConfig':{'transport':{'networkFailPolicy':{'baseRetryWait':'2s'}}}}", "httpClientConfig.transport.networkFailPolicy.maxRetryWait: expected a duration no shorter than baseRetryWait"],
      ["{'httpClientConfig':{'transport':{'networkFailPolicy':{'baseRetryWait':'1s','maxRetryWait':'500ms'}}}}", "httpClientConfig.transport.networkFailPolicy.maxRetryWait: "],
      ["{'httpClientConfig':{'transport':{'networkFailPolicy':{'baseRetryWait':'-1s'}}}}", "httpClientConfig.transport.networkFailPolicy.baseRetryWait: expected a non-negative duration"],
      ["{'httpClientConfig':{'transport':{'networkFailPolicy':{'maxRetryWait':'soon'}}}}", "httpClientConfig.transport.networkFailPolicy.maxRetryWait: expected a duration"],
      ["{'httpClientConfig':{'transport':{'networkFailPolicy':{'policy':'FAIL_SOMETIMES'}}}}", "httpClientConfig.transport.networkFailPolicy.policy: expected FAIL_OPEN or FAIL_CLOSE"],
      ["{'httpClientConfig':{'transport':{'networkFailPolicy':{'maxRetry':-1}}}}", "httpClientConfig.transport.networkFailPolicy.maxRetry: expected an integer"],
      ["{'httpClientConfig':{'transport':{'checkCluster':''}}}", "httpClientConfig.transport.checkCluster: expected a non-empty cluster name"],
      ["{'httpClientConfig':{'transport':{'reportCluster':''}}}", "httpClientConfig.transport.reportCluster: expected a non-empty cluster name"],
      ["{'httpClientConfig':{'transport':{'statsUpdateInterval':10}}}", "httpClientConfig.transport.statsUpdateInterval: expected a duration"],
      ["{'httpClientConfig':{'transport':{'reportBatchMaxEntries':'many'}}}", "httpClientConfig.transport.reportBatchMaxEntries: expected an integer"],
      ["{'httpClientConfig':{'transport':{'disableCheckCache':'yes'}}}", "httpClientConfig.transport.disableCheckCache: expected true or false"],
      ["{'httpClientConfig':{'ignoreForwardedAttributes':1}}", "httpClientConfig.ignoreForwardedAttributes: expected true or false"],
      ["{'httpClientConfig':{'defaultDestinationService':1}}", "httpClientConfig.defaultDestinationService: expected a string"],
      ["{'httpClientConfig':{'hubAttributes':{'attributes':{'a':{'stringValue':1}}}}}", "httpClientConfig.hubAttributes.attributes[a].stringValue: expected a string"],
      ["{'httpClientConfig':{'serviceConfigs':{'s':{'networkFailPolicy':{'policy':'NO'}}}}}", "httpClientConfig.serviceConfigs[s].networkFailPolicy.policy: expected FAIL_OPEN or FAIL_CLOSE"],
      ["{'httpClientConfig':{'serviceConfigs':{'s':{'httpApiSpec':{}}}}}", "httpClientConfig.serviceConfigs[s].httpApiSpec: expected a list"],
      ["{'httpClientConfig':{'serviceConfigs':{'s':{'httpApiSpec':[{'patterns':[{'uriTemplate':'/a/'}]}]}}}}", "httpClientConfig.serviceConfigs[s].httpApiSpec[0].patterns[0].uriTemplate: "],
      ["{'httpClientConfig':{'serviceConfigs':{'s':{'quotaSpec':[{'rules':[{'quotas':[{'quota':'q','charge':0}]}]}]}}}}", "httpClientConfig.serviceConfigs[s].quotaSpec[0].rules[0].quotas[0].charge: expected an integer from 1 to 2147483647"],
    ];
    for (let i = 0; i < rows.length; i++) expectError(rows[i][0], rows[i][1]);
  });

  it("reports a JSON syntax error as the configuration's", () => {
    expectError("{'httpClientConfig':", "configuration: invalid JSON at offset ");
  });
});

const API_SPEC = "{'attributes':{'attributes':{'api.service':{'stringValue':'petstore'}}}," +
  "'patterns':[{'httpMethod':'GET','uriTemplate':'/pets/{id}'},{'httpMethod':'POST','regex':'/pets(\\\\?.*)?'}]}";

describe("compileConfig bindings", () => {
  it("binds a spec to name.namespace.svc.cluster.local, the binding's namespace by default", () => {
    const c = compiled(withResources([
      doc("HTTPAPISpec", "default", "petstore", API_SPEC),
      doc("HTTPAPISpecBinding", "default", "b", "{'services':[{'name':'petstore'}],'apiSpecs':[{'name':'petstore'}]}"),
    ]));
    expect(c.serviceNames).toStrictEqual([PETSTORE]);
    const s = service(c, PETSTORE);
    expect(s.apiSpec.patterns.length).toBe(2);
    expect(s.apiSpec.specAttributes.getString("api.service")).toBe("petstore");
  });

  it("uses metadata namespace 'default' when none is given", () => {
    const c = compiled(withResources([
      doc("HTTPAPISpec", "", "petstore", API_SPEC),
      doc("HTTPAPISpecBinding", "", "b", "{'services':[{'name':'petstore'}],'apiSpecs':[{'name':'petstore'}]}"),
    ]));
    expect(c.serviceNames).toStrictEqual([PETSTORE]);
  });

  it("builds FQDNs: namespace and domain overrides, and the service FQDN wins", () => {
    const c = compiled(withResources([
      doc("HTTPAPISpec", "shop", "spec", API_SPEC),
      doc("HTTPAPISpecBinding", "shop", "b", "{'services':[" +
        "{'name':'a'}," +
        "{'name':'b','namespace':'other'}," +
        "{'name':'c','domain':'mesh.example'}," +
        "{'name':'ignored','namespace':'x','service':'exact.host.example'}" +
        "],'apiSpecs':[{'name':'spec'}]}"),
    ]));
    expect(c.serviceNames).toStrictEqual([
      "a.shop.svc.cluster.local",
      "b.other.svc.cluster.local",
      "c.shop.mesh.example",
      "exact.host.example",
    ]);
  });

  it("resolves a reference in another namespace", () => {
    const c = compiled(withResources([
      doc("QuotaSpec", "quotas", "rq", "{'rules':[{'quotas':[{'quota':'requestcount','charge':3}]}]}"),
      doc("QuotaSpecBinding", "default", "qb", "{'services':[{'name':'petstore'}],'quotaSpecs':[{'name':'rq','namespace':'quotas'}]}"),
    ]));
    const s = service(c, PETSTORE);
    expect(s.quotaRules.length).toBe(1);
    expect(s.quotaRules[0].quotas[0].charge).toBe(3);
  });

  it("charges 1 when a quota has no charge", () => {
    const c = compiled(withResources([
      doc("QuotaSpec", "default", "rq", "{'rules':[{'quotas':[{'quota':'a'},{'quota':'b','charge':'5'}]}]}"),
      doc("QuotaSpecBinding", "default", "qb", "{'services':[{'name':'petstore'}],'quotaSpecs':[{'name':'rq'}]}"),
    ]));
    const rule = service(c, PETSTORE).quotaRules[0];
    expect(rule.quotas[0].quota).toBe("a");
    expect(rule.quotas[0].charge).toBe(1);
    expect(rule.quotas[1].charge).toBe(5);
  });

  it("applies bound specs in namespace/name order (control-plane sort)", () => {
    const c = compiled(withResources([
      doc("QuotaSpec", "default", "zz", "{'rules':[{'quotas':[{'quota':'from-zz'}]}]}"),
      doc("QuotaSpec", "default", "aa", "{'rules':[{'quotas':[{'quota':'from-aa'}]}]}"),
      doc("QuotaSpecBinding", "default", "qb", "{'services':[{'name':'petstore'}],'quotaSpecs':[{'name':'zz'},{'name':'aa'}]}"),
    ]));
    const rules = service(c, PETSTORE).quotaRules;
    expect(rules.length).toBe(2);
    expect(rules[0].quotas[0].quota).toBe("from-aa");
    expect(rules[1].quotas[0].quota).toBe("from-zz");
  });

  // The control plane sorted all specs bound to a service by
  // <type>/<namespace>/<name> (hub-client §3.7, §5), whichever binding named
  // them; here each binding names one spec, and the binding order leaks.
  it("applies specs from several bindings in namespace/name order too", () => {
    const c = compiled(withResources([
      doc("QuotaSpec", "default", "zz", "{'rules':[{'quotas':[{'quota':'from-zz'}]}]}"),
      doc("QuotaSpec", "default", "aa", "{'rules':[{'quotas':[{'quota':'from-aa'}]}]}"),
      doc("QuotaSpecBinding", "default", "qb1", "{'services':[{'name':'petstore'}],'quotaSpecs':[{'name':'zz'}]}"),
      doc("QuotaSpecBinding", "default", "qb2", "{'services':[{'name':'petstore'}],'quotaSpecs':[{'name':'aa'}]}"),
    ]));
    const rules = service(c, PETSTORE).quotaRules;
    expect(rules.length).toBe(2);
    expect(rules[0].quotas[0].quota).toBe("from-aa");
    expect(rules[1].quotas[0].quota).toBe("from-zz");
  });

  it("merges spec-level attributes of several bound specs (later wins)", () => {
    const c = compiled(withResources([
      doc("HTTPAPISpec", "default", "a", "{'attributes':{'attributes':{'api.service':{'stringValue':'A'},'api.version':{'stringValue':'v1'}}},'patterns':[{'uriTemplate':'/a'}]}"),
      doc("HTTPAPISpec", "default", "b", "{'attributes':{'attributes':{'api.service':{'stringValue':'B'}}},'patterns':[{'uriTemplate':'/b'}],'apiKeys':[{'header':'X-Key'}]}"),
      doc("HTTPAPISpecBinding", "default", "bind", "{'services':[{'name':'petstore'}],'apiSpecs':[{'name':'b'},{'name':'a'}]}"),
    ]));
    const spec = service(c, PETSTORE).apiSpec;
    expect(spec.specAttributes.getString("api.service")).toBe("B");
    expect(spec.specAttributes.getString("api.version")).toBe("v1");
    expect(spec.patterns.length).toBe(2);
    expect(spec.patterns[0].text).toBe("/a");
    expect(spec.apiKeys.length).toBe(1);
  });

  it("adds bound specs to a service that serviceConfigs already declares", () => {
    const c = compiled("{'httpClientConfig':{'serviceConfigs':{'" + PETSTORE + "':{'disableReportCalls':true}}}," +
      "'resources':[" + doc("HTTPAPISpec", "default", "petstore", API_SPEC) + "," +
      doc("HTTPAPISpecBinding", "default", "b", "{'services':[{'name':'petstore'}],'apiSpecs':[{'name':'petstore'}]}") + "]}");
    const s = service(c, PETSTORE);
    expect(s.disableReportCalls).toBe(true);
    expect(s.apiSpec.patterns.length).toBe(2);
    expect(c.serviceNames.length).toBe(1);
  });

  it("names the field path of every resource and binding error", () => {
    const rows: string[][] = [
      [withResources([doc("HTTPAPISpecBinding", "default", "b", "{'services':[{'name':'petstore'}],'apiSpecs':[{'name':'missing'}]}")]),
        "resources[0] (HTTPAPISpecBinding default/b).spec.apiSpecs[0]: references HTTPAPISpec default/missing, which is not defined"],
      [withResources([doc("HTTPAPISpec", "default", "petstore", API_SPEC),
        doc("HTTPAPISpecBinding", "default", "b", "{'services':[{'name':'petstore'}],'apiSpecs':[{'name':'petstore','namespace':'elsewhere'}]}")]),
        "resources[1] (HTTPAPISpecBinding default/b).spec.apiSpecs[0]: references HTTPAPISpec elsewhere/petstore, which is not defined"],
      // a QuotaSpec of the same name does not satisfy an HTTPAPISpec reference
      [withResources([doc("QuotaSpec", "default", "petstore", "{'rules':[]}"),
        doc("HTTPAPISpecBinding", "default", "b", "{'services':[{'name':'petstore'}],'apiSpecs':[{'name':'petstore'}]}")]),
        "resources[1] (HTTPAPISpecBinding default/b).spec.apiSpecs[0]: references HTTPAPISpec default/petstore"],
      [withResources([doc("QuotaSpecBinding", "ns", "qb", "{'services':[{'name':'petstore'}],'quotaSpecs':[{'name':'nope'}]}")]),
        "resources[0] (QuotaSpecBinding ns/qb).spec.quotaSpecs[0]: references QuotaSpec ns/nope, which is not defined"],
      [withResources([doc("HTTPAPISpec", "default", "p", API_SPEC), doc("HTTPAPISpecBinding", "default", "b", "{'services':[],'apiSpecs':[{'name':'p'}]}")]),
        "resources[1] (HTTPAPISpecBinding default/b).spec.services: expected at least one service"],
      [withResources([doc("HTTPAPISpecBinding", "default", "b", "{'services':[{'name':'x'}]}")]),
        "resources[0] (HTTPAPISpecBinding default/b).spec.apiSpecs: expected at least one reference"],
      [withResources([doc("HTTPAPISpec", "default", "p", API_SPEC), doc("HTTPAPISpecBinding", "default", "b", "{'services':[{'namespace':'x'}],'apiSpecs':[{'name':'p'}]}")]),
        "resources[1] (HTTPAPISpecBinding default/b).spec.services[0]: expected name or service"],
      [withResources([doc("Gateway", "default", "g", "{}")]), "resources[0].kind: expected HTTPAPISpec, HTTPAPISpecBinding, QuotaSpec or QuotaSpecBinding"],
      [withResources([doc("HTTPAPISpec", "default", "", API_SPEC)]), "resources[0].metadata.name: expected a non-empty name"],
      ["{'resources':{}}", "resources: expected a list"],
      ["{'resources':[1]}", "resources[0]: expected an object"],
      [withResources([doc("HTTPAPISpec", "default", "p", "[]")]), "resources[0] (HTTPAPISpec default/p).spec: expected an object"],
    ];
    for (let i = 0; i < rows.length; i++) expectError(rows[i][0], rows[i][1]);
  });

  // One spec bound twice to one service (two bindings, or one binding naming
  // the service twice) is still one spec: the control plane collected the
  // bound references into a set (istio/istio pilot model
  // HTTPAPISpecByDestination / QuotaSpecByDestination). Here the second copy
  // makes every template "overlap" itself and the config is refused.
  it("binds a spec once when two bindings name the same service and spec", () => {
    const r = compileConfig(q(withResources([
      doc("HTTPAPISpec", "default", "petstore", API_SPEC),
      doc("HTTPAPISpecBinding", "default", "b1", "{'services':[{'name':'petstore'}],'apiSpecs':[{'name':'petstore'}]}"),
      doc("HTTPAPISpecBinding", "default", "b2", "{'services':[{'service':'" + PETSTORE + "'}],'apiSpecs':[{'name':'petstore'}]}"),
    ])));
    expect(r.error).toBe("");
    expect(r.config).not.toBeNull();
    expect(r.config!.services.get(PETSTORE).apiSpec.patterns.length).toBe(2);
  });

  it("charges a QuotaSpec once when it is bound twice to the same service", () => {
    const c = compiled(withResources([
      doc("QuotaSpec", "default", "rq", "{'rules':[{'quotas':[{'quota':'requestcount'}]}]}"),
      doc("QuotaSpecBinding", "default", "qb1", "{'services':[{'name':'petstore'}],'quotaSpecs':[{'name':'rq'}]}"),
      doc("QuotaSpecBinding", "default", "qb2", "{'services':[{'name':'petstore'}],'quotaSpecs':[{'name':'rq'}]}"),
    ]));
    expect(service(c, PETSTORE).quotaRules.length).toBe(1);
  });
});

function apiSpecConfig(patterns: string): string {
  return withResources([
    doc("HTTPAPISpec", "default", "x", "{'patterns':[" + patterns + "]}"),
    doc("HTTPAPISpecBinding", "default", "b", "{'services':[{'name':'petstore'}],'apiSpecs':[{'name':'x'}]}"),
  ]);
}

describe("compileConfig HTTPAPISpec patterns", () => {
  it("accepts templates and regexes, with httpMethod absent meaning any", () => {
    const c = compiled(apiSpecConfig(
      "{'httpMethod':'GET','uriTemplate':'/pets/{id}'},{'uriTemplate':'/pets'},{'httpMethod':'*','uriTemplate':'/a/**'}," +
      "{'regex':'/r/[0-9]+'},{'httpMethod':'GET','uriTemplate':'/pets/{id}:watch'}"));
    const p = service(c, PETSTORE).apiSpec.patterns;
    expect(p.length).toBe(5);
    expect(p[0].method).toBe("GET");
    expect(p[1].method).toBe("*");
    expect(p[2].method).toBe("*");
    expect(p[3].isRegex).toBe(true);
    expect(p[3].method).toBe("*");
    expect(p[3].text).toBe("/r/[0-9]+");
    expect(p[4].text).toBe("/pets/{id}:watch");
  });

  it("accepts the same template shape for different methods", () => {
    const c = compiled(apiSpecConfig("{'httpMethod':'GET','uriTemplate':'/pets/{id}'},{'httpMethod':'DELETE','uriTemplate':'/pets/{name}'},{'uriTemplate':'/pets/*'}"));
    expect(service(c, PETSTORE).apiSpec.patterns.length).toBe(3);
  });

  it("refuses invalid templates, naming the field (rows after hub-client §3.1)", () => {
    const bad: string[] = ["", "/", "pets", "/a/", "//", "/a//b", "/a:", "/{}", "/{x", "/a{x}", "/{term:1}", "/search{?q*,lang}", "/a/**/*", "/a:b:c"];
    for (let i = 0; i < bad.length; i++) {
      const e = compileError(apiSpecConfig("{'httpMethod':'GET','uriTemplate':'" + bad[i] + "'}"));
      expect(e.startsWith("resources[0] (HTTPAPISpec default/x).spec.patterns[0].uriTemplate: ")).toBe(true, bad[i] + " -> " + e);
    }
  });

  it("accepts a duplicate (method, template shape) with a warning naming the later pattern; the first wins", () => {
    const rows: string[] = [
      "{'httpMethod':'GET','uriTemplate':'/pets/{id}'},{'httpMethod':'GET','uriTemplate':'/pets/{name}'}",
      "{'httpMethod':'GET','uriTemplate':'/pets/{id}'},{'httpMethod':'GET','uriTemplate':'/pets/*'}",
      "{'uriTemplate':'/pets/{id}'},{'httpMethod':'*','uriTemplate':'/pets/{id}'}",
    ];
    for (let i = 0; i < rows.length; i++) {
      const r = compileConfig(q(apiSpecConfig(rows[i])));
      expect(r.error).toBe("", rows[i]);
      expect(r.warnings.length).toBe(1, rows[i]);
      const w = r.warnings[0];
      expect(w.startsWith("resources[0] (HTTPAPISpec default/x).spec.patterns[1].uriTemplate: ")).toBe(true, w);
      expect(w.includes("duplicates an earlier pattern")).toBe(true, w);
      const spec = service(r.config!, PETSTORE).apiSpec;
      expect(spec.patterns.length).toBe(1, rows[i]);
      const match = spec.apply("GET", "/pets/7", new AttributeBag(), true);
      expect(match.winner).toBe(0, rows[i]);
      expect(match.bindingNames.length).toBe(1, rows[i]);
    }
  });

  it("has no warnings for distinct patterns", () => {
    const r = compileConfig(q(apiSpecConfig("{'httpMethod':'GET','uriTemplate':'/pets/{id}'},{'httpMethod':'POST','uriTemplate':'/pets/{id}'}")));
    expect(r.error).toBe("");
    expect(r.warnings.length).toBe(0);
  });

  it("refuses regexes that need backtracking or do not parse, naming the field", () => {
    const bad: string[] = ["(a)\\\\1", "(?=a)a", "(?!a)b", "(?<=a)b", "[a-", "(", "a{2,1}"];
    for (let i = 0; i < bad.length; i++) {
      const e = compileError(apiSpecConfig("{'uriTemplate':'/ok'},{'regex':'/fine'},{'regex':'" + bad[i] + "'}"));
      expect(e.startsWith("resources[0] (HTTPAPISpec default/x).spec.patterns[2].regex: ")).toBe(true, bad[i] + " -> " + e);
    }
  });

  it("needs exactly one of uriTemplate and regex", () => {
    expectError(apiSpecConfig("{'httpMethod':'GET'}"), "resources[0] (HTTPAPISpec default/x).spec.patterns[0]: expected exactly one of uriTemplate, regex");
    expectError(apiSpecConfig("{'uriTemplate':'/a','regex':'/a'}"), "resources[0] (HTTPAPISpec default/x).spec.patterns[0]: expected exactly one of uriTemplate, regex");
    expectError(apiSpecConfig("{'uriTemplate':'/a','httpMethod':5}"), "resources[0] (HTTPAPISpec default/x).spec.patterns[0].httpMethod: expected a string");
    expectError(apiSpecConfig("{'uriTemplate':'/a','attributes':{'attributes':{'api.operation':{}}}}"), "resources[0] (HTTPAPISpec default/x).spec.patterns[0].attributes.attributes[api.operation]: ");
  });

  it("reads API key locations: query as written, header lower-cased", () => {
    const c = compiled(withResources([
      doc("HTTPAPISpec", "default", "x", "{'patterns':[],'apiKeys':[{'query':'Api_Key'},{'header':'X-Custom-KEY'}]}"),
      doc("HTTPAPISpecBinding", "default", "b", "{'services':[{'name':'petstore'}],'apiSpecs':[{'name':'x'}]}"),
    ]));
    const keys = service(c, PETSTORE).apiSpec.apiKeys;
    expect(keys.length).toBe(2);
    expect(keys[0].kind).toBe(ApiKeyIn.Query);
    expect(keys[0].name).toBe("Api_Key");
    expect(keys[1].kind).toBe(ApiKeyIn.Header);
    expect(keys[1].name).toBe("x-custom-key");
  });

  it("reads a cookie API key location as written", () => {
    const c = compiled(withResources([
      doc("HTTPAPISpec", "default", "x", "{'patterns':[],'apiKeys':[{'cookie':'Sid'}]}"),
      doc("HTTPAPISpecBinding", "default", "b", "{'services':[{'name':'petstore'}],'apiSpecs':[{'name':'x'}]}"),
    ]));
    const keys = service(c, PETSTORE).apiSpec.apiKeys;
    expect(keys.length).toBe(1);
    expect(keys[0].kind).toBe(ApiKeyIn.Cookie);
    expect(keys[0].name).toBe("Sid");
  });

  it("refuses an API key with no location or more than one", () => {
    const rows: string[] = ["{}", "{'query':'a','header':'b'}", "{'header':'sid','cookie':'sid'}", "{'query':'a','cookie':'b'}"];
    for (let i = 0; i < rows.length; i++) {
      expectError(withResources([
        doc("HTTPAPISpec", "default", "x", "{'apiKeys':[" + rows[i] + "]}"),
        doc("HTTPAPISpecBinding", "default", "b", "{'services':[{'name':'petstore'}],'apiSpecs':[{'name':'x'}]}"),
      ]), "resources[0] (HTTPAPISpec default/x).spec.apiKeys[0]: expected exactly one of query, header, cookie");
    }
  });
});

function quotaConfig(spec: string): string {
  return withResources([
    doc("QuotaSpec", "default", "q", spec),
    doc("QuotaSpecBinding", "default", "qb", "{'services':[{'name':'petstore'}],'quotaSpecs':[{'name':'q'}]}"),
  ]);
}

describe("compileConfig QuotaSpec", () => {
  it("compiles rules, matches and clauses", () => {
    const c = compiled(quotaConfig("{'rules':[" +
      "{'match':[{'clause':{'request.method':{'exact':'GET'},'request.path':{'prefix':'/pets'}}},{'clause':{'request.headers[x-user]':{'regex':'a.*'}}}]," +
      "'quotas':[{'quota':'rq','charge':2}]}," +
      "{'quotas':[{'quota':'all'}]}]}"));
    const rules = service(c, PETSTORE).quotaRules;
    expect(rules.length).toBe(2);
    expect(rules[0].matches.length).toBe(2);
    expect(rules[0].matches[0].clauses.length).toBe(2);
    expect(rules[0].matches[0].clauses[0].key).toBe("request.method");
    expect(rules[0].matches[1].clauses[0].key).toBe("request.headers[x-user]");
    expect(rules[0].matches[1].clauses[0].match.matches("alice")).toBe(true);
    expect(rules[0].matches[1].clauses[0].match.matches("bob")).toBe(false);
    expect(rules[1].matches.length).toBe(0);
  });

  it("names the field path of every QuotaSpec error", () => {
    const P = "resources[0] (QuotaSpec default/q).spec.rules[0]";
    const rows: string[][] = [
      ["{'rules':[{'quotas':[{'charge':1}]}]}", P + ".quotas[0].quota: expected a quota name"],
      ["{'rules':[{'quotas':[{'quota':''}]}]}", P + ".quotas[0].quota: expected a quota name"],
      ["{'rules':[{'quotas':[{'quota':'q','charge':0}]}]}", P + ".quotas[0].charge: expected an integer from 1 to 2147483647"],
      ["{'rules':[{'quotas':[{'quota':'q','charge':-1}]}]}", P + ".quotas[0].charge: expected an integer from 1 to 2147483647"],
      ["{'rules':[{'quotas':[{'quota':'q','charge':2147483648}]}]}", P + ".quotas[0].charge: expected an integer from 1 to 2147483647"],
      ["{'rules':[{'quotas':[{'quota':'q','charge':1.5}]}]}", P + ".quotas[0].charge: expected an integer"],
      ["{'rules':[{'match':[{'clause':{'a':{'suffix':'x'}}}],'quotas':[]}]}", P + ".match[0].clause[a].suffix: unknown field (expected exact, prefix or regex)"],
      ["{'rules':[{'match':[{'clause':{'a':{'exact':'x','prefix':'y'}}}]}]}", P + ".match[0].clause[a]: expected exactly one of exact, prefix, regex"],
      ["{'rules':[{'match':[{'clause':{'a':{'exact':1}}}]}]}", P + ".match[0].clause[a].exact: expected a string"],
      ["{'rules':[{'match':[{'clause':{'a':{'regex':'(a)\\\\1'}}}]}]}", P + ".match[0].clause[a].regex: "],
      ["{'rules':[{'match':[{'clause':{'a':{'regex':'(?=x)'}}}]}]}", P + ".match[0].clause[a].regex: "],
      ["{'rules':{}}", "resources[0] (QuotaSpec default/q).spec.rules: expected a list"],
      ["{'rules':[{'match':{}}]}", P + ".match: expected a list"],
    ];
    for (let i = 0; i < rows.length; i++) expectError(quotaConfig(rows[i][0]), rows[i][1]);
  });
});

describe("compileConfig scale", () => {
  it("compiles 200 template and 50 regex patterns", () => {
    const parts = new Array<string>();
    for (let i = 0; i < 200; i++) parts.push("{'httpMethod':'GET','uriTemplate':'/r" + i.toString() + "/{id}/items/*'}");
    for (let i = 0; i < 50; i++) parts.push("{'httpMethod':'POST','regex':'/x" + i.toString() + "/[a-z]+'}");
    const c = compiled(apiSpecConfig(parts.join(",")));
    const spec = service(c, PETSTORE).apiSpec;
    expect(spec.patterns.length).toBe(250);
    expect(spec.regexPatterns.length).toBe(50);
  });
});
