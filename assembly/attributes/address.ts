// Socket address parsing for source/destination ip and port attributes.
// The ip attributes are bytes in network order: 4 for IPv4, 16 for IPv6.

export class SocketAddress {
  constructor(
    public ip: Uint8Array | null,
    /** -1 when the address carries no port. */
    public port: i64,
  ) {}
}

/** Parses `1.2.3.4`, `1.2.3.4:80`, `::1`, `[::1]`, `[::1]:80`. Unparseable parts are null / -1. */
export function parseSocketAddress(text: string): SocketAddress {
  if (text.length == 0) return new SocketAddress(null, -1);
  if (text.charCodeAt(0) == 0x5b) {
    const close = text.indexOf("]");
    if (close < 0) return new SocketAddress(null, -1);
    const ip = parseIPv6(text.substring(1, close));
    let port: i64 = -1;
    if (close + 1 < text.length && text.charCodeAt(close + 1) == 0x3a) port = parsePort(text.substring(close + 2));
    return new SocketAddress(ip, port);
  }
  const firstColon = text.indexOf(":");
  if (firstColon >= 0 && text.indexOf(":", firstColon + 1) >= 0) {
    return new SocketAddress(parseIPv6(text), -1);
  }
  if (firstColon >= 0) {
    return new SocketAddress(parseIPv4(text.substring(0, firstColon)), parsePort(text.substring(firstColon + 1)));
  }
  return new SocketAddress(parseIPv4(text), -1);
}

function parsePort(s: string): i64 {
  if (s.length == 0 || s.length > 5) return -1;
  let n: i64 = 0;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c < 0x30 || c > 0x39) return -1;
    n = n * 10 + (c - 0x30);
  }
  return n <= 65535 ? n : -1;
}

export function parseIPv4(s: string): Uint8Array | null {
  const out = new Uint8Array(4);
  if (!parseIPv4Into(s, out, 0)) return null;
  return out;
}

function parseIPv4Into(s: string, out: Uint8Array, at: i32): bool {
  let part = 0;
  let value = 0;
  let digits = 0;
  for (let i = 0; i <= s.length; i++) {
    const c = i < s.length ? s.charCodeAt(i) : 0x2e;
    if (c == 0x2e) {
      if (digits == 0 || part > 3) return false;
      out[at + part++] = <u8>value;
      value = 0;
      digits = 0;
    } else if (c >= 0x30 && c <= 0x39) {
      value = value * 10 + (c - 0x30);
      if (++digits > 3 || value > 255) return false;
    } else return false;
  }
  return part == 4;
}

function hexDigit(c: i32): i32 {
  if (c >= 0x30 && c <= 0x39) return c - 0x30;
  if (c >= 0x61 && c <= 0x66) return c - 0x61 + 10;
  if (c >= 0x41 && c <= 0x46) return c - 0x41 + 10;
  return -1;
}

/** RFC 4291 text forms, including `::` and a trailing dotted IPv4 part. */
export function parseIPv6(s: string): Uint8Array | null {
  const zone = s.indexOf("%");
  if (zone >= 0) s = s.substring(0, zone);
  const out = new Uint8Array(16);
  const gap = s.indexOf("::");
  if (gap >= 0 && s.indexOf("::", gap + 1) >= 0) return null;
  const head = gap >= 0 ? s.substring(0, gap) : s;
  const tail = gap >= 0 ? s.substring(gap + 2) : "";
  const headGroups = parseGroups(head, out, 0, gap < 0);
  if (headGroups < 0) return null;
  if (gap < 0) return headGroups == 8 ? out : null;
  const tailBytes = new Uint8Array(16);
  const tailGroups = parseGroups(tail, tailBytes, 0, true);
  if (tailGroups < 0 || headGroups + tailGroups > 7) return null;
  const tailStart = 16 - tailGroups * 2;
  for (let i = 0; i < tailGroups * 2; i++) out[tailStart + i] = tailBytes[i];
  return out;
}

// Parses colon-separated hex groups into out[at..]; returns the number of
// 16-bit groups written (a dotted IPv4 tail counts as two), or -1.
function parseGroups(s: string, out: Uint8Array, at: i32, allowIPv4Tail: bool): i32 {
  if (s.length == 0) return 0;
  let groups = 0;
  let start = 0;
  while (start <= s.length) {
    let end = s.indexOf(":", start);
    if (end < 0) end = s.length;
    const group = s.substring(start, end);
    if (end == s.length && allowIPv4Tail && group.indexOf(".") >= 0) {
      if (groups > 6 || !parseIPv4Into(group, out, at + groups * 2)) return -1;
      return groups + 2;
    }
    if (group.length == 0 || group.length > 4 || groups >= 8) return -1;
    let v = 0;
    for (let i = 0; i < group.length; i++) {
      const d = hexDigit(group.charCodeAt(i));
      if (d < 0) return -1;
      v = v * 16 + d;
    }
    out[at + groups * 2] = <u8>(v >> 8);
    out[at + groups * 2 + 1] = <u8>v;
    groups++;
    start = end + 1;
    if (end == s.length) break;
  }
  return groups;
}
