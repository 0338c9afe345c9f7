import * as grpc from "@grpc/grpc-js";
import { envoyService } from "../wire/envoy_grpc.ts";

export interface GrpcStreamSinkOptions {
  /** `host:port` (plain text). */
  address: string;
  /** The Envoy service (host/wire/envoy_grpc.ts) and its client-streaming method. */
  service: { readonly file: string; readonly service: string };
  method: string;
  /** The `identifier` the first message of every stream carries (Envoy sends it once per stream). */
  identifier: Record<string, unknown>;
  /** A stream failed (the service is down, refused the stream …); the next message opens a new one. */
  onError: (e: Error) => void;
}

/**
 * A client-streaming call Envoy keeps open to a sink (its access log
 * service, its metrics service): messages are written as they come, the
 * first of each stream with the identifier; a failed stream is dropped (what
 * was in flight is lost, as with Envoy) and the next message opens a new one.
 * The services answer nothing until the stream ends, so nothing is awaited.
 */
export class GrpcStreamSink {
  private readonly client: grpc.Client;
  private stream: grpc.ClientWritableStream<Record<string, unknown>> | undefined;
  /** Messages written to a stream so far. */
  written = 0;

  constructor(private readonly options: GrpcStreamSinkOptions) {
    const Client = envoyService(options.service.file, options.service.service);
    this.client = new Client(options.address, grpc.credentials.createInsecure());
  }

  send(message: Record<string, unknown>): void {
    let first = false;
    if (!this.stream) {
      const method = (
        this.client as unknown as Record<string, (cb: (e: grpc.ServiceError | null) => void) => grpc.ClientWritableStream<Record<string, unknown>>>
      )[this.options.method];
      const stream = method.call(this.client, (e) => {
        if (this.stream === stream) this.stream = undefined;
        if (e && e.code !== grpc.status.CANCELLED) this.options.onError(new Error(`${this.options.address}: ${e.details || e.message}`));
      });
      stream.on("error", () => undefined); // told by the callback
      this.stream = stream;
      first = true;
    }
    this.stream.write(first ? { identifier: this.options.identifier, ...message } : message);
    this.written++;
  }

  /** Ends the stream (after what was written is sent) and closes the channel. */
  async close(): Promise<void> {
    const stream = this.stream;
    this.stream = undefined;
    if (stream)
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, 2000);
        timer.unref();
        stream.once("finish", () => {
          clearTimeout(timer);
          resolve();
        });
        stream.end();
      });
    this.client.close();
  }
}
