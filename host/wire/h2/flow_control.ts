// HTTP/2 flow control (RFC 9113 §5.2, §6.9): the receive windows this side
// advertises (the connection's and each stream's), and the peer's SETTINGS
// that bound what this side sends.

import { ConnectionError, DEFAULT_MAX_FRAME_SIZE, DEFAULT_WINDOW, ErrorCode, MAX_ALLOWED_FRAME_SIZE, MAX_WINDOW, Setting } from "./frames.ts";

/**
 * A window this side advertised: what the peer may still send. Octets are
 * given back (WINDOW_UPDATE) once half the window has been consumed, so a
 * peer never waits long and few updates go out.
 */
export class ReceiveWindow {
  private available: number;
  private unacked = 0;

  constructor(private readonly size = DEFAULT_WINDOW) {
    this.available = size;
  }

  /** Counts `octets` received (padding included); false when they exceed the window. */
  receive(octets: number): boolean {
    this.available -= octets;
    return this.available >= 0;
  }

  /** Marks `octets` consumed; returns the increment to send now (0: none yet). */
  consume(octets: number): number {
    this.unacked += octets;
    if (this.unacked < this.size / 2) return 0;
    const increment = this.unacked;
    this.available += increment;
    this.unacked = 0;
    return increment;
  }
}

/** The peer's SETTINGS that bound this side's sending. */
export interface PeerLimits {
  initialWindow: number;
  maxFrameSize: number;
  maxConcurrentStreams: number;
}

export const DEFAULT_PEER_LIMITS: PeerLimits = {
  initialWindow: DEFAULT_WINDOW,
  maxFrameSize: DEFAULT_MAX_FRAME_SIZE,
  maxConcurrentStreams: Number.POSITIVE_INFINITY,
};

/** `limits` with a SETTINGS frame's entries applied; throws ConnectionError on a value the protocol forbids. */
export function applySettings(limits: PeerLimits, entries: ReadonlyArray<readonly [number, number]>): PeerLimits {
  const next = { ...limits };
  for (const [id, value] of entries) {
    if (id === Setting.INITIAL_WINDOW_SIZE) {
      if (value > MAX_WINDOW) throw new ConnectionError(ErrorCode.FLOW_CONTROL_ERROR, `SETTINGS_INITIAL_WINDOW_SIZE ${value}`);
      next.initialWindow = value;
    } else if (id === Setting.MAX_FRAME_SIZE) {
      if (value < DEFAULT_MAX_FRAME_SIZE || value > MAX_ALLOWED_FRAME_SIZE)
        throw new ConnectionError(ErrorCode.PROTOCOL_ERROR, `SETTINGS_MAX_FRAME_SIZE ${value}`);
      next.maxFrameSize = value;
    } else if (id === Setting.MAX_CONCURRENT_STREAMS) next.maxConcurrentStreams = value;
    else if (id === Setting.ENABLE_PUSH && value > 1) throw new ConnectionError(ErrorCode.PROTOCOL_ERROR, `SETTINGS_ENABLE_PUSH ${value}`);
    // HEADER_TABLE_SIZE: this side's encoder never indexes. MAX_HEADER_LIST_SIZE: advisory. Unknown ids: ignored (§6.5.2).
  }
  return next;
}
