// Run inside a network namespace by test/capture/original_destination.test.ts.
//   listen HOST,PORT…   answers each connection with one JSON line: its original destination, local and peer address
//   connect HOST PORT   prints what the server answered
import net from "node:net";
import { originalDestination, originalDestinationUnavailable } from "../../host/capture/original_destination.ts";

const [mode, ...args] = process.argv.slice(2);
if (mode === "listen") {
  const ports = args.map((a) => a.split(","));
  let open = 0;
  for (const [host, port] of ports) {
    const server = net.createServer((socket) => {
      const answer = {
        original: originalDestination(socket) ?? null,
        local: { address: socket.localAddress, port: socket.localPort },
        peer: socket.remoteAddress,
      };
      socket.end(`${JSON.stringify(answer)}\n`);
    });
    server.listen(Number(port), host, () => {
      if (++open === ports.length) console.log(`probe listening ${JSON.stringify({ unavailable: originalDestinationUnavailable() ?? null })}`);
    });
  }
} else if (mode === "connect") {
  const socket = net.connect(Number(args[1]), args[0]);
  let text = "";
  socket.on("data", (c) => (text += c));
  socket.on("end", () => process.stdout.write(text));
  socket.on("error", (e) => {
    console.error(`connect ${args[0]}:${args[1]}: ${e.message}`);
    process.exit(1);
  });
} else {
  console.error("usage: original_dst_probe.ts listen HOST,PORT… | connect HOST PORT");
  process.exit(2);
}
