// TLS connections for the HTTP/1.1 client, made as node:https's Agent made
// them: `tls.connect` with the client's credentials, the origin's SNI and
// server identity check, and the session the last connection to the same
// origin left (resumption: the Agent's session cache, at most 100 origins,
// an origin's session forgotten when a connection to it fails).
//
// One connector holds one set of credentials (a workload certificate): when
// they are replaced, a new connector is made and the old one closed, as the
// Agent was replaced. Its sessions go with it: a resumed TLS 1.3 session
// keeps the identity of the handshake that made it, and Node checks no
// server identity on a resumed session (so an origin's name carries what
// the check expects; see TlsOrigin.name).
import { type ConnectionOptions, type PeerCertificate, type SecureContext, type TLSSocket, connect, createSecureContext } from "node:tls";

/** How a pool's origin is reached over TLS. */
export interface TlsOrigin {
  readonly connector: TlsConnector;
  /** SNI. */
  readonly servername: string;
  /** The server identity check (with `rejectUnauthorized`: its error fails the connection). */
  readonly checkServerIdentity?: (hostname: string, cert: PeerCertificate) => Error | undefined;
  /**
   * What else tells apart origins whose connections and sessions may not be
   * shared (the identity the check expects): part of the pool's key.
   */
  readonly name: string;
}

/** The credentials and trust anchors of every connection a connector makes. */
export interface TlsCredentials {
  readonly key?: string;
  readonly cert?: string;
  readonly ca?: string;
  readonly rejectUnauthorized?: boolean;
  readonly minVersion?: ConnectionOptions["minVersion"];
  readonly maxVersion?: ConnectionOptions["maxVersion"];
  readonly ALPNProtocols?: string[];
}

/** node:https's Agent default (`maxCachedSessions`). */
const MAX_CACHED_SESSIONS = 100;

export class TlsConnector {
  /** Parsed once for all connections (tls.connect would parse the PEM for each). */
  private readonly context: SecureContext;
  /** Sessions by pool key, the oldest first. */
  private readonly sessions = new Map<string, Buffer>();
  private readonly sockets = new Set<TLSSocket>();

  constructor(private readonly credentials: TlsCredentials) {
    this.context = createSecureContext({
      ...(credentials.key !== undefined ? { key: credentials.key } : {}),
      ...(credentials.cert !== undefined ? { cert: credentials.cert } : {}),
      ...(credentials.ca !== undefined ? { ca: credentials.ca } : {}),
      ...(credentials.minVersion ? { minVersion: credentials.minVersion } : {}),
      ...(credentials.maxVersion ? { maxVersion: credentials.maxVersion } : {}),
    });
  }

  /** A connection to `host:port` for the pool key `key`, resuming the key's last session. */
  connect(key: string, host: string, port: number, localAddress: string | undefined, origin: TlsOrigin): TLSSocket {
    const c = this.credentials;
    const session = this.sessions.get(key);
    const socket = connect({
      host,
      port,
      ...(localAddress ? { localAddress } : {}),
      secureContext: this.context,
      servername: origin.servername,
      rejectUnauthorized: c.rejectUnauthorized ?? true,
      ...(origin.checkServerIdentity ? { checkServerIdentity: origin.checkServerIdentity } : {}),
      ...(c.ALPNProtocols ? { ALPNProtocols: c.ALPNProtocols } : {}),
      ...(session ? { session } : {}),
    });
    this.sockets.add(socket);
    socket.on("session", (s: Buffer) => this.keep(key, s));
    socket.once("close", (hadError: boolean) => {
      this.sockets.delete(socket);
      if (hadError) this.sessions.delete(key);
    });
    return socket;
  }

  /** Connections open (for tests and /stats). */
  get open(): number {
    return this.sockets.size;
  }

  /** Closes every connection it made (in use or idle) and forgets its sessions, as Agent.destroy(). */
  close(): void {
    for (const s of this.sockets) s.destroy();
    this.sockets.clear();
    this.sessions.clear();
  }

  private keep(key: string, session: Buffer): void {
    if (!this.sessions.has(key) && this.sessions.size >= MAX_CACHED_SESSIONS) {
      const oldest = this.sessions.keys().next().value;
      if (oldest !== undefined) this.sessions.delete(oldest);
    }
    this.sessions.set(key, session);
  }
}
