// Stand-in for upstream's httpbin image (go-httpbin): the endpoints the
// mesh tasks use. `node httpbin.mjs [port]` (default 8080, as the image).
//   GET /headers      {"headers": {"Name": ["value", …]}}: the request's headers as received
//   GET /ip           {"origin": "<peer address>"}
//   ANY /status/<n>   answers with status n
//   GET /get          {"args", "headers", "origin", "url"}
import { createServer } from "node:http";

const port = Number(process.argv[2] ?? process.env.PORT ?? 8080);

/** go-httpbin's header form: canonical names, every value in a list. */
function headers(req) {
  const out = {};
  for (let i = 0; i < req.rawHeaders.length; i += 2) {
    const name = req.rawHeaders[i].toLowerCase().replace(/(^|-)([a-z])/g, (_, dash, c) => dash + c.toUpperCase());
    (out[name] ??= []).push(req.rawHeaders[i + 1]);
  }
  return out;
}

function json(res, status, body) {
  res.writeHead(status, { "content-type": "application/json; charset=utf-8" });
  res.end(`${JSON.stringify(body, null, 2)}\n`);
}

const server = createServer((req, res) => {
  req.resume();
  const url = new URL(req.url ?? "/", "http://httpbin");
  const origin = req.socket.remoteAddress?.replace(/^::ffff:/, "") ?? "";
  const status = /^\/status\/(\d{3})$/.exec(url.pathname);
  if (status) {
    res.writeHead(Number(status[1]));
    res.end();
  } else if (url.pathname === "/headers") json(res, 200, { headers: headers(req) });
  else if (url.pathname === "/ip") json(res, 200, { origin });
  else if (url.pathname === "/get")
    json(res, 200, { args: Object.fromEntries(url.searchParams), headers: headers(req), origin, url: `http://${req.headers.host}${req.url}` });
  else if (url.pathname === "/") json(res, 200, { service: "httpbin" });
  else json(res, 404, { status_code: 404, error: "Not Found" });
});
server.listen(port, "0.0.0.0", () => process.stdout.write(`httpbin listening on ${port}\n`));
process.on("SIGTERM", () => server.close(() => process.exit(0)));
