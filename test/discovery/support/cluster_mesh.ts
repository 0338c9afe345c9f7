// A mesh with every kind of outbound cluster (a headless Service, a ClusterIP
// Service, ServiceEntries resolved by DNS, DNS_ROUND_ROBIN and NONE) and two
// Gateways of two namespaces selecting one gateway workload, their
// VirtualServices routing and mirroring to three of the hosts.

export const CLUSTER_MESH = `apiVersion: v1
kind: Service
metadata: {name: db, namespace: shop}
spec: {clusterIP: None, selector: {app: db}, ports: [{name: tcp-db, port: 5432}, {name: http-admin, port: 8080}]}
---
apiVersion: v1
kind: Endpoints
metadata: {name: db, namespace: shop}
subsets: [{addresses: [{ip: 10.0.1.1}, {ip: 10.0.1.2}], ports: [{name: tcp-db, port: 5432}, {name: http-admin, port: 8080}]}]
---
apiVersion: v1
kind: Service
metadata: {name: web, namespace: shop}
spec: {clusterIP: 10.96.0.10, selector: {app: web}, ports: [{name: http, port: 80}]}
---
apiVersion: networking.mesh.io/v1
kind: ServiceEntry
metadata: {name: api, namespace: shop}
spec:
  hosts: [api.example.com]
  ports: [{number: 443, name: tls, protocol: TLS}]
  resolution: DNS
  endpoints: [{address: a.api.example.com, labels: {version: v1}}, {address: b.api.example.com, weight: 3, labels: {version: v2}}]
---
apiVersion: networking.mesh.io/v1
kind: DestinationRule
metadata: {name: api, namespace: shop}
spec: {host: api.example.com, subsets: [{name: v2, labels: {version: v2}}]}
---
apiVersion: networking.mesh.io/v1
kind: ServiceEntry
metadata: {name: bare, namespace: shop}
spec: {hosts: [bare.example.com], ports: [{number: 80, name: http, protocol: HTTP}], resolution: DNS}
---
apiVersion: networking.mesh.io/v1
kind: ServiceEntry
metadata: {name: legacy, namespace: shop}
spec: {hosts: [legacy.example.com], ports: [{number: 9000, name: tcp, protocol: TCP}], resolution: DNS_ROUND_ROBIN}
---
apiVersion: networking.mesh.io/v1
kind: ServiceEntry
metadata: {name: anything, namespace: shop}
spec: {hosts: [any.example.com], ports: [{number: 7000, name: tcp, protocol: TCP}], resolution: NONE}
---
apiVersion: networking.mesh.io/v1
kind: Gateway
metadata: {name: shop-gw, namespace: shop}
spec: {selector: {app: ingress}, servers: [{port: {number: 80, name: http, protocol: HTTP}, hosts: ["shop.example.com"]}]}
---
apiVersion: networking.mesh.io/v1
kind: VirtualService
metadata: {name: shop, namespace: shop}
spec: {hosts: [shop.example.com], gateways: [shop-gw], http: [{route: [{destination: {host: web}}]}]}
---
apiVersion: networking.mesh.io/v1
kind: Gateway
metadata: {name: partner-gw, namespace: partner}
spec: {selector: {app: ingress}, servers: [{port: {number: 80, name: http, protocol: HTTP}, hosts: ["partner.example.com"]}]}
---
apiVersion: networking.mesh.io/v1
kind: VirtualService
metadata: {name: partner, namespace: partner}
spec: {hosts: [partner.example.com], gateways: [partner-gw], http: [{route: [{destination: {host: bare.example.com}}], mirror: {host: legacy.example.com}}]}
`;

export const DB = "db.shop.svc.cluster.local";
