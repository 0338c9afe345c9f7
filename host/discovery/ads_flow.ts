/**
 * How many response bytes the ADS streams have in flight at once: written to
 * a proxy's stream and not yet passed to its socket. A stream's write
 * completes only once the proxy's HTTP/2 flow-control window lets it out,
 * so when thousands of proxies connect at once (a restart, a rollout) and
 * each is answered ~100 KB of clusters, load assignments and listeners
 * before any has read them, every response would otherwise wait in memory
 * at the same time: the daemon's peak, which the C allocator then keeps as
 * resident memory long after it is freed. Past `limitBytes` in flight, a
 * response waits as the few references it is built from (the shared encoded
 * resources, the proxy's nonce and version) and is assembled when its turn
 * comes (each stream's responses in the order they were sent). Upstream's istiod bounds the same thing with one blocking send per
 * stream and a limit on concurrent pushes.
 *
 * A proxy that stops reading cannot hold the others up: a write still in
 * flight after `parkAfterMs` no longer counts against the limit.
 */

/** The part of a gRPC server stream a response is written to. */
export interface WritableStream {
  write(bytes: Buffer, done: (error?: Error | null) => void): unknown;
}

/**
 * Bytes in flight before responses wait, by default: enough to keep sockets busy; at 5 000 connecting
 * clients 16 MiB kept about twice the resident memory per client and was not faster (docs/benchmarks.md).
 */
export const DEFAULT_WRITE_LIMIT_BYTES = 4 * 1024 * 1024;
/** A write not done after this long is a proxy that reads slowly or not at all: its bytes stop counting. */
export const DEFAULT_PARK_AFTER_MS = 2_000;

interface Write {
  readonly writer: StreamWriter;
  readonly bytes: number;
  readonly startedAt: number;
  /** Still counted against the limit (false once done or parked). */
  counted: boolean;
}

interface Waiting {
  readonly writer: StreamWriter;
  readonly build: () => Buffer;
  readonly label: string;
}

export class WriteBudget {
  private inFlight = 0;
  /** Counted writes, oldest first. */
  private readonly writing = new Set<Write>();
  /**
   * Responses waiting, by connection (a stream's `group`: its HTTP/2
   * connection, whose flow-control window its streams share), each in the
   * order sent. Turns go round the connections, so writes waiting on one
   * proxy's window do not take the whole budget while other proxies read.
   */
  private readonly waiting = new Map<string, Waiting[]>();
  private waitingCount = 0;
  private timer: ReturnType<typeof setTimeout> | undefined;

  constructor(
    readonly limitBytes = DEFAULT_WRITE_LIMIT_BYTES,
    readonly parkAfterMs = DEFAULT_PARK_AFTER_MS,
    private readonly now: () => number = () => performance.now(),
  ) {}

  /** A writer for one stream of connection `group`; `failed` hears of a response that could not be built or written. */
  writer(stream: WritableStream, group: string, failed: (label: string, error: Error) => void): StreamWriter {
    return new StreamWriter(this, stream, group, failed);
  }

  /** Bytes counted in flight now, and responses waiting (for tests and debugging). */
  get usage(): { readonly inFlight: number; readonly waiting: number } {
    return { inFlight: this.inFlight, waiting: this.waitingCount };
  }

  /** @internal a response from `writer`: written now when nothing of its connection waits and the limit allows, else queued. */
  submit(writer: StreamWriter, build: () => Buffer, label: string): void {
    const queue = this.waiting.get(writer.group);
    if (!queue && this.admits()) return this.start(writer, build, label);
    if (queue) queue.push({ writer, build, label });
    else this.waiting.set(writer.group, [{ writer, build, label }]);
    this.waitingCount++;
    this.wake();
  }

  /** @internal `writer`'s stream closed: what it has in flight stops counting. */
  release(writer: StreamWriter): void {
    for (const w of this.writing) if (w.writer === writer) this.uncount(w);
    this.pump();
  }

  private admits(): boolean {
    if (this.inFlight < this.limitBytes) return true;
    // Full: writes in flight for too long (proxies that do not read) stop counting.
    const cutoff = this.now() - this.parkAfterMs;
    for (const w of this.writing) {
      if (w.startedAt > cutoff) break;
      this.uncount(w);
    }
    return this.inFlight < this.limitBytes;
  }

  private start(writer: StreamWriter, build: () => Buffer, label: string): void {
    let bytes: Buffer;
    try {
      bytes = build();
    } catch (e) {
      writer.failed(label, e as Error);
      return;
    }
    const write: Write = { writer, bytes: bytes.byteLength, startedAt: this.now(), counted: true };
    this.writing.add(write);
    this.inFlight += write.bytes;
    try {
      writer.stream.write(bytes, () => {
        this.uncount(write);
        this.pump();
      });
    } catch (e) {
      this.uncount(write);
      writer.failed(label, e as Error);
    }
  }

  private uncount(w: Write): void {
    if (!w.counted) return;
    w.counted = false;
    this.inFlight -= w.bytes;
    this.writing.delete(w);
  }

  /** Writes waiting responses while the limit allows: one per connection per turn, the connection then last in line. */
  private pump(): void {
    while (this.waitingCount > 0) {
      const [group, queue] = this.waiting.entries().next().value!;
      const next = queue[0];
      if (!next.writer.closed && !this.admits()) break;
      queue.shift();
      this.waitingCount--;
      this.waiting.delete(group);
      if (queue.length > 0) this.waiting.set(group, queue);
      if (!next.writer.closed) this.start(next.writer, next.build, next.label);
    }
    this.wake();
  }

  /** With responses waiting, a timer for when the oldest write in flight would be parked (no write may ever finish). */
  private wake(): void {
    if (this.timer || this.waitingCount === 0) return;
    const oldest = this.writing.values().next().value;
    const delay = oldest ? Math.max(0, oldest.startedAt + this.parkAfterMs - this.now()) : 0;
    this.timer = setTimeout(() => {
      this.timer = undefined;
      this.pump();
    }, delay + 1);
    this.timer.unref?.();
  }
}

/** One stream's responses, written in the order given, within the budget shared by all streams. */
export class StreamWriter {
  closed = false;

  constructor(
    private readonly budget: WriteBudget,
    readonly stream: WritableStream,
    /** The connection the stream is on. */
    readonly group: string,
    readonly failed: (label: string, error: Error) => void,
  ) {}

  /** Writes the response `build` assembles, now or when the budget allows (`label` names it in a failure). */
  write(build: () => Buffer, label: string): void {
    if (!this.closed) this.budget.submit(this, build, label);
  }

  /** The stream is gone: nothing more is written, and what is in flight stops counting. */
  close(): void {
    if (this.closed) return;
    this.closed = true;
    this.budget.release(this);
  }
}
