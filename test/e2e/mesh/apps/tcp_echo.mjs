// Stand-in for upstream's tcp-echo-server image: `node tcp_echo.mjs <ports> <prefix>`
// listens on each of the comma-separated ports and answers every line a
// client sends with "<prefix> <line>".
import { createServer } from "node:net";

const [ports = "9000", prefix = "hello"] = process.argv.slice(2);
for (const port of ports.split(",").map(Number)) {
  createServer((socket) => {
    let pending = "";
    socket.setEncoding("utf8");
    socket.on("error", () => socket.destroy());
    socket.on("data", (chunk) => {
      pending += chunk;
      for (let nl = pending.indexOf("\n"); nl >= 0; nl = pending.indexOf("\n")) {
        socket.write(`${prefix} ${pending.slice(0, nl)}\n`);
        pending = pending.slice(nl + 1);
      }
    });
    socket.on("end", () => socket.end());
  }).listen(port, "0.0.0.0", () => console.log(`tcp-echo listening on ${port}`));
}
