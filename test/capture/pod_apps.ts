// Small servers run inside a test's network namespaces (test/capture/captured_sidecar.test.ts).
//   pod_apps.ts NAME http:PORT… tcp:PORT…   HTTP answers JSON {name, port, peer, host}; TCP sends one JSON line {name, port, peer} then echoes
//                                           (what ends in "|end" is answered once the client's FIN came: "after fin: …")
//   pod_apps.ts connect HOST PORT [LINE]    a TCP client: sends LINE, prints everything until the server closes or 5 s of quiet
//   pod_apps.ts get HOST PORT HOSTHEADER     an HTTP GET: prints the status and the body
import { createServer as createHttpServer, request } from "node:http";
import net from "node:net";

const [name, ...args] = process.argv.slice(2);
if (name === "get") {
  const [host, port, hostHeader] = args;
  const req = request({ host, port: Number(port), path: "/", headers: { host: hostHeader, connection: "close" } }, (res) => {
    let body = "";
    res.on("data", (c) => (body += c));
    res.on("end", () => process.stdout.write(`${res.statusCode} ${body}`));
  });
  req.setTimeout(20_000, () => req.destroy(new Error("no answer in 20 s")));
  req.on("error", (e) => {
    console.error(`GET http://${host}:${port}/ (Host ${hostHeader}): ${e.message}`);
    process.exitCode = 1;
  });
  req.end();
} else if (name === "connect") {
  const [host, port, line] = args;
  const socket = net.connect(Number(port), host);
  let text = "";
  socket.setTimeout(5000, () => socket.end());
  socket.on("connect", () => {
    // A line ending in "|end" goes with the client's FIN (half-close): the server answers only once it has seen the FIN.
    if (line?.endsWith("|end")) socket.end(`${line}\n`);
    else if (line) socket.write(`${line}\n`);
  });
  socket.on("data", (c) => {
    text += c;
    if (line && text.includes(line)) socket.end();
  });
  socket.on("close", () => process.stdout.write(text));
  socket.on("error", (e) => {
    console.error(`connect ${host}:${port}: ${e.message}`);
    process.exitCode = 1;
  });
} else {
  let open = 0;
  for (const spec of args) {
    const [kind, portText] = spec.split(":");
    const port = Number(portText);
    const ready = () => {
      if (++open === args.length) console.log(`apps listening {"name":${JSON.stringify(name)}}`);
    };
    if (kind === "http") {
      createHttpServer((req, res) => {
        res.setHeader("content-type", "application/json");
        res.end(JSON.stringify({ name, port, peer: req.socket.remoteAddress, host: req.headers.host, path: req.url }));
      }).listen(port, "0.0.0.0", ready);
    } else {
      net
        .createServer({ allowHalfOpen: true }, (socket) => {
          socket.write(`${JSON.stringify({ name, port, peer: socket.remoteAddress })}\n`);
          let received = "";
          socket.on("data", (c) => {
            received += c;
            if (!received.includes("|end")) socket.write(c);
          });
          socket.on("end", () => (received.includes("|end") ? socket.end(`after fin: ${received}`) : socket.end()));
        })
        .listen(port, "0.0.0.0", ready);
    }
  }
}
