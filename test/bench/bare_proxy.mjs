// The benchmark's baseline: a bare Node HTTP forwarding proxy (keep-alive
// upstream, streamed bodies) with no filter, run as its own process so its
// CPU can be measured like the sidecar's.
//   node test/bench/bare_proxy.mjs <upstream port>
import { Agent, createServer, request } from "node:http";

const upstreamPort = Number(process.argv[2]);
const agent = new Agent({ keepAlive: true, maxSockets: 256 });
const server = createServer((req, res) => {
  const headers = { ...req.headers };
  delete headers.connection;
  const up = request({ host: "127.0.0.1", port: upstreamPort, method: req.method, path: req.url, headers, agent }, (r) => {
    res.writeHead(r.statusCode ?? 502, r.headers);
    r.pipe(res);
  });
  up.on("error", () => res.writeHead(503).end());
  req.pipe(up);
});
server.listen(0, "127.0.0.1", () => console.log(`bare-proxy listening ${JSON.stringify({ port: server.address().port })}`));
process.on("SIGTERM", () => server.close(() => process.exit(0)));
