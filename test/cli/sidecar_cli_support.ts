import { type LocalMesh, startLocalMesh } from "../../host/demo/local_mesh.ts";
import { sidecarConfig } from "../e2e/sidecar_support.ts";
import { FIXTURES, type Run } from "./cli_golden_support.ts";
import { meshctlInProcess } from "./in_process.ts";

/**
 * Security, networking and orchestrator documents for a sidecar started by a
 * test (`startLocalMesh` names it petstore-v1.demo): the Pod gives the
 * sidecar its labels, the Service its ports; a mesh-wide STRICT policy, a
 * workload policy that disables mTLS on the http port with a DestinationRule
 * that agrees, a port-level STRICT on the metrics port with no port-level
 * DestinationRule (a CONFLICT), a DENY policy and a JWT policy.
 */
export const SIDECAR_POLICIES = `apiVersion: v1
kind: Pod
metadata: {name: petstore-v1, namespace: demo, labels: {app: petstore, version: v1}}
spec:
  containers:
  - name: app
    ports: [{name: http, containerPort: 8080}, {name: metrics, containerPort: 9090}]
---
apiVersion: v1
kind: Service
metadata: {name: petstore, namespace: demo}
spec:
  selector: {app: petstore}
  ports: [{name: http, port: 80, targetPort: http}, {name: metrics, port: 9091, targetPort: 9090}]
---
apiVersion: security.mesh.io/v1beta1
kind: PeerAuthentication
metadata: {name: default, namespace: mesh-system}
spec: {mtls: {mode: STRICT}}
---
apiVersion: security.mesh.io/v1beta1
kind: PeerAuthentication
metadata: {name: petstore, namespace: demo}
spec:
  selector: {matchLabels: {app: petstore}}
  mtls: {mode: DISABLE}
  portLevelMtls: {"9090": {mode: STRICT}}
---
apiVersion: networking.mesh.io/v1alpha3
kind: DestinationRule
metadata: {name: petstore, namespace: demo}
spec:
  host: petstore.demo.svc.cluster.local
  trafficPolicy: {tls: {mode: DISABLE}}
---
apiVersion: security.mesh.io/v1beta1
kind: AuthorizationPolicy
metadata: {name: require-jwt-admin, namespace: demo}
spec:
  selector: {matchLabels: {app: petstore}}
  action: DENY
  rules:
  - from: [{source: {notRequestPrincipals: ["*"]}}]
    to: [{operation: {paths: ["/admin*"]}}]
---
apiVersion: security.mesh.io/v1beta1
kind: AuthorizationPolicy
metadata: {name: other-app, namespace: demo}
spec:
  selector: {matchLabels: {app: reviews}}
  action: DENY
  rules: [{}]
---
apiVersion: security.mesh.io/v1beta1
kind: RequestAuthentication
metadata: {name: jwt, namespace: demo}
spec:
  selector: {matchLabels: {app: petstore}}
  jwtRules:
  - issuer: testing@secure.mesh.io
    jwksUri: https://example.com/jwks.json
`;

/** A running hub + echo app + sidecar whose configuration directory holds the hub client config and SIDECAR_POLICIES. */
export function startPolicyMesh(): Promise<LocalMesh> {
  return startLocalMesh({ sidecarConfig: `${sidecarConfig("FAIL_OPEN")}---\n${SIDECAR_POLICIES}` });
}

/** Runs meshctl in-process (in_process.ts), in the fixtures folder; the sidecar it asks keeps serving meanwhile. */
export function meshctlAsync(args: string[]): Promise<Run> {
  return meshctlInProcess(args, { cwd: FIXTURES });
}
