// Socket addresses into source/destination ip (bytes, network order: 4 for
// IPv4, 16 for IPv6, hub-client §2.2) and port. IPv6 rows follow RFC 4291 §2.2.
import { parseIPv4, parseIPv6, parseSocketAddress } from "../../assembly/attributes/address";

function hex(b: Uint8Array | null): string {
  if (b === null) return "null";
  let s = "";
  for (let i = 0; i < b.length; i++) {
    const v = <i32>b[i];
    s += (v < 16 ? "0" : "") + v.toString(16);
  }
  return s;
}

class Row {
  constructor(public text: string, public ip: string, public port: i64) {}
}

describe("parseSocketAddress", () => {
  it("parses IPv4 and IPv6 forms with and without a port", () => {
    const rows: Row[] = [
      new Row("1.2.3.4", "01020304", -1),
      new Row("1.2.3.4:8080", "01020304", 8080),
      new Row("255.255.255.255:65535", "ffffffff", 65535),
      new Row("0.0.0.0:0", "00000000", 0),
      new Row("::1", "00000000000000000000000000000001", -1),
      new Row("[::1]", "00000000000000000000000000000001", -1),
      new Row("[::1]:443", "00000000000000000000000000000001", 443),
      new Row("[2001:db8::8a2e:370:7334]:80", "20010db80000000000008a2e03707334", 80),
      new Row("[fe80::1%eth0]:9", "fe800000000000000000000000000001", 9),
      new Row("[::ffff:10.0.0.1]:15001", "00000000000000000000ffff0a000001", 15001),
    ];
    for (let i = 0; i < rows.length; i++) {
      const a = parseSocketAddress(rows[i].text);
      expect(hex(a.ip)).toBe(rows[i].ip, rows[i].text);
      expect(a.port).toBe(rows[i].port, rows[i].text);
    }
  });

  it("leaves unparseable parts null / -1", () => {
    const rows: Row[] = [
      new Row("", "null", -1),
      new Row("localhost:80", "null", 80),
      new Row("1.2.3.4:", "01020304", -1),
      new Row("1.2.3.4:65536", "01020304", -1),
      new Row("1.2.3.4:http", "01020304", -1),
      new Row("1.2.3.4:123456", "01020304", -1),
      new Row("[::1", "null", -1),
      new Row("[::1]80", "00000000000000000000000000000001", -1),
      new Row("[nothex::1]:80", "null", 80),
      new Row("1.2.3:80", "null", 80),
    ];
    for (let i = 0; i < rows.length; i++) {
      const a = parseSocketAddress(rows[i].text);
      expect(hex(a.ip)).toBe(rows[i].ip, rows[i].text);
      expect(a.port).toBe(rows[i].port, rows[i].text);
    }
  });
});

describe("parseIPv4", () => {
  it("accepts dotted quads", () => {
    expect(hex(parseIPv4("10.0.0.1"))).toBe("0a000001");
    expect(hex(parseIPv4("192.168.1.255"))).toBe("c0a801ff");
  });
  it("refuses everything else", () => {
    const rows: string[] = ["", "1.2.3", "1.2.3.4.5", "256.0.0.1", "1..2.3", "1.2.3.", ".1.2.3", "a.b.c.d", "1.2.3.4 ", "1000.1.1.1", "-1.2.3.4"];
    for (let i = 0; i < rows.length; i++) expect(parseIPv4(rows[i])).toBeNull(rows[i]);
  });
});

describe("parseIPv6 (RFC 4291 §2.2)", () => {
  it("accepts the full, compressed and mixed forms", () => {
    const rows: string[][] = [
      ["2001:0db8:0000:0000:0000:ff00:0042:8329", "20010db8000000000000ff0000428329"],
      ["2001:db8::ff00:42:8329", "20010db8000000000000ff0000428329"],
      ["::", "00000000000000000000000000000000"],
      ["1::", "00010000000000000000000000000000"],
      ["1:2:3:4:5:6:7::", "00010002000300040005000600070000"],
      ["::2:3:4:5:6:7:8", "00000002000300040005000600070008"],
      ["FFFF::abcd", "ffff000000000000000000000000abcd"],
      ["::ffff:192.0.2.128", "00000000000000000000ffffc0000280"],
      ["1:2:3:4:5:6:1.2.3.4", "00010002000300040005000601020304"],
      ["fe80::1%25eth0", "fe800000000000000000000000000001"],
    ];
    for (let i = 0; i < rows.length; i++) expect(hex(parseIPv6(rows[i][0]))).toBe(rows[i][1], rows[i][0]);
  });

  it("refuses malformed text", () => {
    const rows: string[] = [
      "", "1:2:3:4:5:6:7", "1:2:3:4:5:6:7:8:9", "1::2::3", ":1::2", "1::2:", "1:2:3:4:5:6:7:8::",
      "12345::1", "g::1", "::1.2.3", "1:2:3:4:5:6:7:1.2.3.4", "::1.2.3.4:5", "1:::2",
    ];
    for (let i = 0; i < rows.length; i++) expect(parseIPv6(rows[i])).toBeNull(rows[i]);
  });
});
