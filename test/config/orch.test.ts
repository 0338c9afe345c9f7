import assert from "node:assert/strict";
import { describe } from "node:test";
import { tableTest } from "./table.ts";

describe("v1 Service", () => {
  const baseline = `
apiVersion: v1
kind: Service
metadata: { name: httpbin, namespace: foo, labels: { app: httpbin } }
spec:
  selector: { app: httpbin }
  ports:
    - { name: http, port: 8000, targetPort: 80 }
`;
  tableTest(
    baseline,
    [
      ["targetPort defaults to port", { "spec.ports.0.targetPort": undefined }, "ok", (s) => assert.equal(s.ports[0].targetPort, 8000)],
      ["named targetPort", { "spec.ports.0.targetPort": "http-alt" }, "ok", (s) => assert.equal(s.ports[0].targetPort, "http-alt")],
      ["targetPort as a decimal string", { "spec.ports.0.targetPort": "8080" }, "ok", (s) => assert.equal(s.ports[0].targetPort, 8080)],
      ["UDP", { "spec.ports.0.protocol": "UDP" }, "ok", (s) => assert.equal(s.ports[0].protocol, "UDP")],
      ["one port without a name", { "spec.ports.0.name": undefined }, "ok"],
      ["no selector", { "spec.selector": undefined }, "ok", (s) => assert.equal(s.selector, undefined)],
      [
        "headless (clusterIP None): no address, marked headless",
        { "spec.clusterIP": "None" },
        "ok",
        (s) => assert.deepEqual([s.headless, s.addresses], [true, []]),
      ],
      ["a cluster IP is not headless", { "spec.clusterIP": "10.96.0.7" }, "ok", (s) => assert.deepEqual([s.headless, s.addresses], [undefined, ["10.96.0.7"]])],
      ["fields the mesh does not model are not warned about", { "spec.clusterIP": "None", "spec.sessionAffinity": "None", status: {} }, "ok"],
      ["port 0", { "spec.ports.0.port": 0 }, ["spec.ports[0].port", /integer from 1 to 65535/]],
      [
        "two ports without names (upstream's analyzer reads them)",
        { "spec.ports.0.name": undefined, "spec.ports.1": { port: 9000 } },
        "ok",
        (s) =>
          assert.deepEqual(
            s.ports.map((p: { name?: string }) => p.name),
            [undefined, undefined],
          ),
      ],
      ["protocol in lower case", { "spec.ports.0.protocol": "udp" }, "ok", (s) => assert.equal(s.ports[0].protocol, "UDP")],
      ["duplicate port names", { "spec.ports.1": { name: "http", port: 9000 } }, ["spec.ports[1].name", /duplicate port name "http"/]],
      [
        "an application protocol as protocol: kept, with a warning (upstream's analyzer reads it)",
        { "spec.ports.0.protocol": "HTTP" },
        "ok",
        (s) => assert.equal(s.ports[0].protocol, "HTTP"),
      ],
      ["an empty protocol", { "spec.ports.0.protocol": "" }, ["spec.ports[0].protocol", /one of TCP, UDP, SCTP/]],
      ["bad targetPort name", { "spec.ports.0.targetPort": "Not_A_Name" }, ["spec.ports[0].targetPort", /container port name/]],
      ["upper-case service name", { "metadata.name": "HttpBin" }, ["metadata.name", /DNS-1123 label/]],
      ["bad namespace", { "metadata.namespace": "foo_bar" }, ["metadata.namespace", /namespace name/]],
    ],
    (s) => assert.deepEqual(s.ports, [{ name: "http", port: 8000, targetPort: 80, protocol: "TCP", appProtocol: undefined }]),
  );
});

describe("v1 Namespace", () => {
  const baseline = `
apiVersion: v1
kind: Namespace
metadata: { name: foo, labels: { mesh-injection: enabled } }
`;
  tableTest(baseline, [
    ["no labels", { "metadata.labels": undefined }, "ok"],
    ["name too long", { "metadata.name": "a".repeat(64) }, ["metadata.name", /DNS-1123 label/]],
    ["label key with two slashes", { "metadata.labels": { "a/b/c": "x" } }, ["metadata.labels[a/b/c]", /label key/]],
  ]);
});

describe("v1 Pod", () => {
  const baseline = `
apiVersion: v1
kind: Pod
metadata: { name: httpbin-1, namespace: foo, labels: { app: httpbin, version: v1 } }
spec:
  serviceAccountName: httpbin
  containers:
    - name: httpbin
      image: docker.io/example/httpbin
      ports: [{ containerPort: 80, name: http }]
`;
  tableTest(
    baseline,
    [
      ["service account defaults to default", { "spec.serviceAccountName": undefined }, "ok", (s) => assert.equal(s.serviceAccountName, "default")],
      ["container without ports", { "spec.containers.0.ports": undefined }, "ok"],
      ["no containers", { "spec.containers": [] }, ["spec.containers", /non-empty list/]],
      ["containerPort 0", { "spec.containers.0.ports.0.containerPort": 0 }, ["spec.containers[0].ports[0].containerPort", /integer from 1 to 65535/]],
      ["port name too long", { "spec.containers.0.ports.0.name": "a-very-long-port-name" }, ["spec.containers[0].ports[0].name", /up to 15/]],
      ["container without name", { "spec.containers.0.name": undefined }, ["spec.containers[0].name", /expected a string/]],
    ],
    (s) => {
      assert.equal(s.serviceAccountName, "httpbin");
      assert.deepEqual(s.containers[0].ports, [{ containerPort: 80, name: "http", protocol: "TCP" }]);
    },
  );
});

describe("apps/v1 Deployment", () => {
  const baseline = `
apiVersion: apps/v1
kind: Deployment
metadata: { name: httpbin, namespace: foo }
spec:
  replicas: 2
  selector: { matchLabels: { app: httpbin } }
  template:
    metadata: { labels: { app: httpbin, version: v1 } }
    spec:
      containers: [{ name: httpbin, image: example/httpbin, ports: [{ containerPort: 80 }] }]
`;
  tableTest(
    baseline,
    [
      ["replicas default to 1", { "spec.replicas": undefined }, "ok", (s) => assert.equal(s.replicas, 1)],
      [
        "matchExpressions",
        {
          "spec.selector": {
            matchExpressions: [
              { key: "app", operator: "In", values: ["httpbin"] },
              { key: "canary", operator: "DoesNotExist" },
            ],
          },
        },
        "ok",
      ],
      ["wrong apiVersion", { apiVersion: "extensions/v1beta1" }, ["apiVersion", /expected apps\/v1 for kind Deployment/]],
      ["no selector", { "spec.selector": undefined }, ["spec.selector", /label selector/]],
      ["selector not matching the template", { "spec.selector.matchLabels": { app: "other" } }, ["spec.selector", /matches spec.template.metadata.labels/]],
      [
        "In without values",
        { "spec.selector": { matchExpressions: [{ key: "app", operator: "In" }] } },
        ["spec.selector.matchExpressions[0].values", /non-empty list with operator In/],
      ],
      [
        "unknown operator",
        { "spec.selector": { matchExpressions: [{ key: "app", operator: "Equals", values: ["x"] }] } },
        ["spec.selector.matchExpressions[0].operator", /one of In, NotIn, Exists, DoesNotExist/],
      ],
      ["negative replicas", { "spec.replicas": -1 }, ["spec.replicas", /integer from 0/]],
      ["template without spec", { "spec.template.spec": undefined }, ["spec.template.spec", /pod spec with containers/]],
    ],
    (s) => {
      assert.deepEqual(s.template.labels, { app: "httpbin", version: "v1" });
      assert.equal(s.template.spec.serviceAccountName, "default");
    },
  );
});
