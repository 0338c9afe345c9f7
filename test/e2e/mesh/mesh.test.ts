// Issue 24's "Done when", on pods as network namespaces: upstream's httpbin,
// sleep and bookinfo samples (renamed) deployed from their YAML through
// `meshctl orch-inject`, each pod's capture rules installed by its init
// container (`disco-agent mesh-iptables`), its sidecar (`disco-agent proxy`
// as uid 1337) joining the mesh with nothing but the control plane's address
// and its projected token; disco-discovery and mesh_ca on the host side.
// Upstream's mTLS migration, HTTP authorization and JWT tasks are run as their
// pages run them (curl from sleep's pod) and give their documented results.
//
// Topology (as the tasks): foo and bar with httpbin and sleep injected,
// legacy with sleep not injected, default with bookinfo injected.
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { type JWK, SignJWT, exportJWK, generateKeyPair } from "jose";
import { AGENT_BIN, MESHCTL_BIN } from "../../../host/demo/binaries.ts";
import { curlInPod, runInPod } from "../../support/netns_process.ts";
import { runProcess, waitFor } from "../../support/processes.ts";
import { E2eMesh, SAMPLES } from "./mesh_support.ts";
import { parseYaml } from "../../support/netns_manifests.ts";

const ISSUER = "testing@secure.mesh.io";

/** The rows of `meshctl proxy-status`'s table, each column read at its header's offset (values such as `NOT SENT` hold a space). */
function proxyStatusRows(table: string): Record<string, string>[] {
  const [header, ...lines] = table.trimEnd().split("\n");
  const columns = [...header.matchAll(/\S+/g)].map((m) => ({ name: m[0], at: m.index ?? 0 }));
  return lines.map((line) => Object.fromEntries(columns.map((c, i) => [c.name, line.slice(c.at, columns[i + 1]?.at ?? line.length).trim()])));
}

describe("a mesh run by its control plane: injected pods in network namespaces", () => {
  const mesh = new E2eMesh();
  const sleep = (ns: string) => mesh.pod("sleep", ns).pod;
  /** `curl http://<host>/<path>` from sleep's pod in `from`: the status (0 when the connection failed, curl's 000) and body. */
  const curl = (from: string, url: string, extra: string[] = []) => curlInPod(sleep(from), url, extra);
  const apply = (name: string, yaml: string) => mesh.writeDocuments(`policy-${name}`, parseYaml(yaml, name));
  const remove = (...names: string[]) => {
    for (const n of names) mesh.removeDocuments(`policy-${n}`);
  };
  /** Polls until the matrix of results is as expected (a configuration change takes a push to reach every proxy). */
  async function eventually<T>(what: string, observe: () => Promise<T>, expected: T): Promise<void> {
    let last: T | undefined;
    try {
      await waitFor(what, async () => {
        last = await observe();
        try {
          assert.deepEqual(last, expected);
          return true;
        } catch {
          return false;
        }
      });
    } catch (e) {
      assert.deepEqual(last, expected, `${what}: ${(e as Error).message}`);
    }
  }

  before(async () => {
    await mesh.start();
    await Promise.all([
      mesh.deploy(SAMPLES.httpbin, { namespace: "foo" }),
      mesh.deploy(SAMPLES.sleep, { namespace: "foo" }),
      mesh.deploy(SAMPLES.httpbin, { namespace: "bar" }),
      mesh.deploy(SAMPLES.sleep, { namespace: "bar" }),
      mesh.deploy(SAMPLES.sleep, { namespace: "legacy", inject: false }),
      mesh.deploy(SAMPLES.bookinfo, { namespace: "default" }),
      mesh.deploy(SAMPLES.tcpEcho, { namespace: "foo" }),
    ]);
  });
  after(() => mesh.stop());

  it("sleep → curl http://httpbin.foo:8000/headers: 200 through both sidecars over mutual TLS (the app sees X-Forwarded-Client-Cert)", async () => {
    const r = await curl("foo", "http://httpbin.foo:8000/headers");
    assert.equal(r.status, 200, r.stderr || r.body);
    const xfcc: string = JSON.parse(r.body).headers["X-Forwarded-Client-Cert"]?.[0] ?? "";
    assert.match(xfcc, /By=spiffe:\/\/cluster\.local\/ns\/foo\/sa\/httpbin/);
    assert.match(xfcc, /URI=spiffe:\/\/cluster\.local\/ns\/foo\/sa\/sleep/);
    // Inbound capture: the app is called by its sidecar, not by sleep's pod.
    const ip = JSON.parse((await curl("foo", "http://httpbin.foo:8000/ip")).body).origin;
    assert.match(ip, /^127\.0\.0\.[16]$/);
  });

  it("every host form of the Service routes: short name, name.ns, name.ns.svc, the FQDN, the cluster address", async () => {
    const clusterIp = mesh.services.find((s) => s.metadata.name === "httpbin" && s.metadata.namespace === "foo")!.spec.clusterIP;
    for (const host of ["httpbin", "httpbin.foo", "httpbin.foo.svc", "httpbin.foo.svc.cluster.local", clusterIp]) {
      const r = await curl("foo", `http://${host}:8000/headers`);
      assert.equal(r.status, 200, `${host}: ${r.stderr || r.body}`);
      assert.match(JSON.parse(r.body).headers["X-Forwarded-Client-Cert"]?.[0] ?? "", /URI=spiffe:\/\/cluster\.local\/ns\/foo\/sa\/sleep/, host);
    }
  });

  it("bookinfo's productpage reaches details, reviews and ratings by their short names", async () => {
    const colors = new Set<string>();
    for (let i = 0; i < 15 && colors.size < 3; i++) {
      const r = await curl("foo", "http://productpage.default:9080/productpage");
      assert.equal(r.status, 200, r.stderr || r.body);
      assert.match(r.body, /Book Details/);
      assert.match(r.body, /Book Reviews/);
      colors.add(/<font color="(\w+)">/.exec(r.body)?.[1] ?? "none");
    }
    assert.deepEqual([...colors].sort(), ["black", "none", "red"], "reviews v1, v2 (ratings, black stars) and v3 (red stars) answer");
  });

  it("mTLS migration: the non-injected sleep talks plain text until STRICT refuses it (upstream's task results)", async () => {
    const matrix = async () => {
      const out: Record<string, number> = {};
      for (const from of ["foo", "bar", "legacy"])
        for (const to of ["foo", "bar"]) out[`sleep.${from} to httpbin.${to}`] = (await curl(from, `http://httpbin.${to}:8000/ip`)).status;
      return out;
    };
    const all = (code: number, except: Record<string, number> = {}) => ({
      "sleep.foo to httpbin.foo": code,
      "sleep.foo to httpbin.bar": code,
      "sleep.bar to httpbin.foo": code,
      "sleep.bar to httpbin.bar": code,
      "sleep.legacy to httpbin.foo": code,
      "sleep.legacy to httpbin.bar": code,
      ...except,
    });
    await eventually("every client reaches every httpbin (PERMISSIVE)", matrix, all(200));
    const plain = await curl("legacy", "http://httpbin.foo:8000/headers");
    assert.equal(JSON.parse(plain.body).headers["X-Forwarded-Client-Cert"], undefined, "the legacy client's request came in plain text");

    apply(
      "foo-strict",
      "apiVersion: security.mesh.io/v1beta1\nkind: PeerAuthentication\nmetadata: {name: default, namespace: foo}\nspec: {mtls: {mode: STRICT}}\n",
    );
    await eventually("STRICT in foo refuses the legacy client there", matrix, all(200, { "sleep.legacy to httpbin.foo": 0 }));

    apply(
      "mesh-strict",
      "apiVersion: security.mesh.io/v1beta1\nkind: PeerAuthentication\nmetadata: {name: default, namespace: mesh-system}\nspec: {mtls: {mode: STRICT}}\n",
    );
    await eventually(
      "mesh-wide STRICT refuses the legacy client everywhere",
      matrix,
      all(200, { "sleep.legacy to httpbin.foo": 0, "sleep.legacy to httpbin.bar": 0 }),
    );

    remove("foo-strict", "mesh-strict");
    await eventually("without the policies, PERMISSIVE again", matrix, all(200));
  });

  it("TCP between sidecars is mutual TLS: sleep.foo → tcp-echo.foo:9000 answers under STRICT, the legacy client's plain TCP is refused", async () => {
    // upstream's TCP tasks' client (`nc tcp-echo 9000`), as a node one-liner in sleep's pod: one line out, the echo's line back.
    const echo = async (from: string) => {
      const script = `const s=require("node:net").connect(9000,"tcp-echo.foo",()=>s.write("world\\n"));let b="";s.setEncoding("utf8");s.on("data",d=>{b+=d;if(b.includes("\\n")){process.stdout.write(b);s.destroy()}});s.on("error",()=>{});s.setTimeout(15000,()=>s.destroy());`;
      return (await runInPod(sleep(from), [process.execPath, "-e", script])).stdout.trim();
    };
    const matrix = async () => ({ foo: await echo("foo"), legacy: await echo("legacy") });
    await eventually("both clients reach tcp-echo (PERMISSIVE)", matrix, { foo: "hello world", legacy: "hello world" });
    apply(
      "foo-strict-tcp",
      "apiVersion: security.mesh.io/v1beta1\nkind: PeerAuthentication\nmetadata: {name: default, namespace: foo}\nspec: {mtls: {mode: STRICT}}\n",
    );
    try {
      await eventually("STRICT in foo: the sidecar's mutual TLS still gets through, plain TCP does not", matrix, { foo: "hello world", legacy: "" });
      // The server's sidecar took sleep.foo's connections over mutual TLS and refused the legacy client's plain text.
      const stats = (await runInPod(mesh.pod("tcp-echo", "foo").pod, [process.execPath, AGENT_BIN, "request", "GET", "/stats", "--proxyAdminPort", "15000"]))
        .stdout;
      assert.match(stats, /^listener\.inbound\.captured_tcp_mtls: [1-9]\d*$/m, stats);
      assert.match(stats, /^listener\.inbound\.captured_tcp_refused: [1-9]\d*$/m, stats);
    } finally {
      remove("foo-strict-tcp");
    }
  });

  it("HTTP authorization on bookinfo: allow-nothing, then the viewers one by one (upstream's task results)", async () => {
    const page = async () => {
      const r = await curl("foo", "http://productpage.default:9080/productpage");
      if (r.status !== 200) return `${r.status} ${r.body.trim()}`;
      const has = (s: string) => r.body.includes(s);
      return [
        has("Book Details") ? "details" : has("Error fetching product details!") ? "details error" : "?",
        has("Book Reviews") ? "reviews" : has("Error fetching product reviews!") ? "reviews error" : "?",
        has("Ratings service is currently unavailable") ? "ratings unavailable" : "",
      ]
        .filter(Boolean)
        .join(", ");
    };
    const viewer = (name: string, app: string, principal?: string) =>
      `apiVersion: security.mesh.io/v1beta1\nkind: AuthorizationPolicy\nmetadata: {name: ${name}, namespace: default}\nspec:\n  selector: {matchLabels: {app: ${app}}}\n  action: ALLOW\n  rules:\n  - ${principal ? `from: [{source: {principals: ["cluster.local/ns/default/sa/${principal}"]}}]\n    ` : ""}to: [{operation: {methods: ["GET"]}}]\n`;

    apply("allow-nothing", "apiVersion: security.mesh.io/v1beta1\nkind: AuthorizationPolicy\nmetadata: {name: allow-nothing, namespace: default}\nspec: {}\n");
    await eventually("allow-nothing: productpage refuses", page, "403 RBAC: access denied");
    apply("productpage-viewer", viewer("productpage-viewer", "productpage"));
    await eventually("productpage-viewer: the page, without details and reviews", page, "details error, reviews error");
    apply("details-viewer", viewer("details-viewer", "details", "bookinfo-productpage"));
    apply("reviews-viewer", viewer("reviews-viewer", "reviews", "bookinfo-productpage"));
    // reviews v1 calls no ratings: the rating error shows only when v2 or v3 answered.
    await eventually(
      "details and reviews viewers: the page with details and reviews, ratings refused",
      async () => {
        for (let i = 0; i < 6; i++) {
          const p = await page();
          if (p.includes("ratings unavailable")) return p;
        }
        return page();
      },
      "details, reviews, ratings unavailable",
    );
    apply("ratings-viewer", viewer("ratings-viewer", "ratings", "bookinfo-reviews"));
    await eventually("ratings-viewer: the whole page", page, "details, reviews");
    remove("allow-nothing", "productpage-viewer", "details-viewer", "reviews-viewer", "ratings-viewer");
  });

  it("JWT: RequestAuthentication and a require-jwt policy on httpbin.foo (upstream's task results)", async () => {
    const { publicKey, privateKey } = await generateKeyPair("RS256");
    const jwk: JWK = { ...(await exportJWK(publicKey)), kid: "e2e", alg: "RS256", use: "sig" };
    const token = await new SignJWT({ groups: ["group1"] })
      .setProtectedHeader({ alg: "RS256", kid: "e2e", typ: "JWT" })
      .setIssuer(ISSUER)
      .setSubject(ISSUER)
      .setIssuedAt()
      .setExpirationTime("1h")
      .sign(privateKey);
    const status = async (auth?: string) => (await curl("foo", "http://httpbin.foo:8000/headers", auth ? ["-H", `Authorization: Bearer ${auth}`] : [])).status;
    const results = async () => ({ invalid: await status("invalidToken"), none: await status(), valid: await status(token) });

    apply(
      "jwt-example",
      `apiVersion: security.mesh.io/v1beta1\nkind: RequestAuthentication\nmetadata: {name: jwt-example, namespace: foo}\nspec:\n  selector: {matchLabels: {app: httpbin}}\n  jwtRules:\n  - issuer: "${ISSUER}"\n    jwks: '${JSON.stringify({ keys: [jwk] })}'\n`,
    );
    await eventually("RequestAuthentication: an invalid token is refused, no token passes", results, { invalid: 401, none: 200, valid: 200 });
    apply(
      "require-jwt",
      `apiVersion: security.mesh.io/v1beta1\nkind: AuthorizationPolicy\nmetadata: {name: require-jwt, namespace: foo}\nspec:\n  selector: {matchLabels: {app: httpbin}}\n  action: ALLOW\n  rules:\n  - from: [{source: {requestPrincipals: ["${ISSUER}/${ISSUER}"]}}]\n`,
    );
    await eventually("require-jwt: only a valid token passes", results, { invalid: 401, none: 403, valid: 200 });
    remove("jwt-example", "require-jwt");
  });

  it("a policy change in disco-discovery's configuration reaches every proxy; meshctl proxy-status shows all SYNCED", async () => {
    const injected = mesh.pods.filter((p) => p.doc.spec.containers.some((c: { name: string }) => c.name === "mesh-proxy"));
    apply(
      "deny-teapot",
      'apiVersion: security.mesh.io/v1beta1\nkind: AuthorizationPolicy\nmetadata: {name: deny-teapot, namespace: mesh-system}\nspec:\n  action: DENY\n  rules:\n  - to: [{operation: {paths: ["/status/418"]}}]\n',
    );
    await eventually(
      "the root-namespace DENY applies to httpbin in foo and bar",
      async () => [(await curl("foo", "http://httpbin.foo:8000/status/418")).status, (await curl("foo", "http://httpbin.bar:8000/status/418")).status],
      [403, 403],
    );
    const table = await waitFor("every injected pod SYNCED in meshctl proxy-status", async () => {
      const r = await runProcess(process.execPath, [MESHCTL_BIN, "proxy-status", "--debugAddress", mesh.debugAddress]);
      if (r.status !== 0) throw new Error(`meshctl proxy-status exited ${r.status}: ${r.stderr}`);
      const rows = proxyStatusRows(r.stdout);
      const everyPod = injected.every((p) => rows.some((row) => row.NAME === `${p.doc.metadata.name}.${p.doc.metadata.namespace}`));
      // CDS, LDS, EDS and RDS synced on every row; ECDS as upstream prints it for a proxy sent no extension config (NOT SENT), or synced.
      const allSynced = rows.every(
        (row) => ["CDS", "LDS", "EDS", "RDS"].every((c) => row[c]?.startsWith("SYNCED")) && (row.ECDS?.startsWith("SYNCED") || row.ECDS === "NOT SENT"),
      );
      return everyPod && allSynced ? { rows, text: r.stdout } : undefined;
    });
    assert.match(table.text, /^NAME\s+CLUSTER\s+CDS\s+LDS\s+EDS\s+RDS\s+ECDS\s+DISCO\s+VERSION/);
    assert.equal(table.rows.length, injected.length, table.text);
    remove("deny-teapot");
  });
});
