import { request } from "node:http";

/** One HTTP request to a local daemon's HTTP port (a sidecar's admin port, disco-discovery's debug and monitoring ports); loopback by default. */
export function adminRequest(port: number, method: string, path: string, body?: string, host = "127.0.0.1"): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request({ host, port, method: method.toUpperCase(), path: path.startsWith("/") ? path : `/${path}` }, (res) => {
      let text = "";
      res.setEncoding("utf8");
      res.on("data", (c) => {
        text += c;
      });
      res.on("end", () => resolve({ status: res.statusCode ?? 0, body: text }));
    });
    req.on("error", reject);
    req.end(body);
  });
}
