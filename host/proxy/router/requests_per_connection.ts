import type { Agent } from "node:http";
import type { Socket } from "node:net";

/**
 * `connectionPool.http.maxRequestsPerConnection` on a keep-alive agent (the
 * mutual TLS upstreams' node:https agent; plaintext upstreams count it in
 * their own pool, host/wire/h1/client_connection.ts): each
 * request counts against the connection it was given; a connection that has
 * served its limit is not kept alive when it comes free (the agent's
 * `keepSocketAlive` says no, so it is closed instead of pooled). The
 * connection-pool gate keeps a limited cluster's requests below the agent's
 * socket cap, so a free connection always passes through `keepSocketAlive`
 * rather than straight to a queued request.
 */

const served = new WeakMap<Socket, { count: number; limit: number }>();
const wrapped = new WeakSet<Agent>();

export function countRequestOnConnection(agent: Agent | false | undefined | null, socket: Socket, limit: number): void {
  const entry = served.get(socket) ?? { count: 0, limit };
  entry.count++;
  entry.limit = Math.min(entry.limit, limit);
  served.set(socket, entry);
  if (!agent || wrapped.has(agent)) return;
  wrapped.add(agent);
  // Node's agent returns a boolean here (its typings say void): false closes the connection.
  const keep = agent.keepSocketAlive.bind(agent) as unknown as (s: Socket) => boolean;
  (agent as unknown as { keepSocketAlive: (s: Socket) => boolean }).keepSocketAlive = (s: Socket) => {
    const e = served.get(s);
    return e !== undefined && e.count >= e.limit ? false : keep(s);
  };
}
