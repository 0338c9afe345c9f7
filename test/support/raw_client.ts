import { type Socket, connect } from "node:net";

/** A raw TCP client of a listener: what it was sent back, and whether the listener closed it. */
export interface RawClient {
  socket: Socket;
  data: string;
  closed: Promise<void>;
  isClosed: boolean;
}

/** Connects to 127.0.0.1:`port`, writes `first` once connected (when given), and records every byte back. */
export function openRawClient(port: number, first = ""): Promise<RawClient> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, "127.0.0.1");
    const client: RawClient = { socket, data: "", closed: new Promise((r) => socket.once("close", () => r())), isClosed: false };
    socket.setEncoding("latin1");
    socket.on("data", (c: string) => (client.data += c));
    socket.on("error", () => {});
    socket.once("close", () => (client.isClosed = true));
    socket.once("connect", () => {
      if (first) socket.write(first);
      resolve(client);
    });
    socket.once("error", reject);
  });
}
