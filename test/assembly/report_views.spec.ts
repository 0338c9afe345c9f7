// A report's memo takes a header's view (host, path, URL path, user agent…)
// as the one already encoded when it is of the same map reading at the same
// address and length (AttributeValue.viewKey), else compares its bytes: the
// message must be what fresh values give, whichever way a map was refilled.
import { AttributeBag } from "../../assembly/attributes/bag";
import { HeaderMap } from "../../assembly/attributes/header_map";
import { RequestValues } from "../../assembly/attributes/request_values";
import { AttributeValue } from "../../assembly/attributes/value";
import { GLOBAL_WORD_COUNT } from "../../assembly/hub/global_words";
import { encodeReportRequest, ReportRequestEncoder } from "../../assembly/hub/report_request";
import { encodePairs } from "../../assembly/pairs";
import { hex } from "./hub_render";

function filled(map: HeaderMap, path: string, agent: string): HeaderMap {
  const pairs = encodePairs([":path", "user-agent"], [path, agent]);
  expect(map.fill(pairs.dataStart, <usize>pairs.length)).toBe(true);
  return map;
}

describe("AttributeValue.viewKey", () => {
  it("is the reading and address of a view of a header map read from a block, and 0 for any other value", () => {
    const map = filled(new HeaderMap(), "/a/1?x=1", "curl");
    const values = new RequestValues();
    const path = values.headerEntry(map, 0);
    expect(path.isView).toBe(true);
    expect(path.viewKey).toBe((<u64>map.valuePtr(0) << 32) | <u64>map.sourceId);
    expect(map.sourceId).not.toBe(0);
    // A prefix of it (the URL path) is of the same reading.
    const urlPath = values.prefixView(path, 4);
    expect(urlPath.str).toBe("/a/1");
    expect(urlPath.viewKey).toBe(path.viewKey);
    // Views made otherwise, and text, have none.
    expect(values.view(map.valuePtr(0), map.valueLength(0)).viewKey).toBe(0);
    expect(values.cleanView(map.valuePtr(0), map.valueLength(0)).viewKey).toBe(0);
    expect(values.prefixView(values.string("/a/1?x=1"), 4).viewKey).toBe(0);
    // A value reused for a plain view forgets its reading.
    path.setCleanView(map.valuePtr(1), map.valueLength(1));
    expect(path.viewKey).toBe(0);
  });

  it("is 0 once the map is changed, and a block that is not valid UTF-8 gives text", () => {
    const values = new RequestValues();
    const map = filled(new HeaderMap(), "/a/1", "curl");
    const reading = map.sourceId;
    filled(map, "/a/1", "curl");
    expect(map.sourceId).toBe(reading);
    filled(map, "/a/2", "curl");
    expect(map.sourceId).not.toBe(reading);
    const extra = encodePairs(["x-extra"], ["1"]);
    map.add(extra.dataStart + 12, 7, extra.dataStart + 20, 1);
    expect(map.sourceFormat).toBe(0);
    expect(map.sourceId).toBe(0);
    expect(values.headerEntry(map, 0).viewKey).toBe(0);
    filled(map, "/a/2", "curl").remove("user-agent");
    expect(map.sourceId).toBe(0);
    filled(map, "/a/2", "curl").clear();
    expect(map.sourceId).toBe(0);
    const bad = new Uint8Array(2);
    bad[0] = 0xff;
    bad[1] = 0x41;
    const v = new AttributeValue();
    v.setReadingView(bad.dataStart, 2, 7);
    expect(v.isView).toBe(false);
    expect(v.str).toBe("\uFFFDA");
  });
});

describe("ReportRequest with header views", () => {
  it("gives the same bytes when maps are refilled from the same, equal, other or same-length blocks, or changed between", () => {
    const first = new HeaderMap();
    const second = new HeaderMap();
    // Entry 2 is a block of the same length as entry 1's with other bytes, read
    // into the same place (its views have the same addresses and lengths);
    // entry 3 the same bytes in the other map, entry 4 in the first again;
    // entry 5's map is changed after its fill, entry 7's block is longer.
    const paths = ["/a/1?x=1", "/a/1?x=1", "/a/2?x=1", "/a/2?x=1", "/a/2?x=1", "/a/2?x=1", "/a/1?x=1", "/a/1?x=1", "/b/12?x=1", "/a/1?x=1"];
    const agents = ["curl", "curl", "curl", "curl", "curl", "curl", "wget", "wget", "wget", "wget"];
    const useSecond = [false, false, false, true, false, false, false, false, false, true];
    const values = new RequestValues();
    const bag = new AttributeBag();
    const encoder = new ReportRequestEncoder();
    encoder.begin(GLOBAL_WORD_COUNT);
    const reference = new Array<AttributeBag>();
    for (let i = 0; i < paths.length; i++) {
      const map = filled(useSecond[i] ? second : first, paths[i], agents[i]);
      if (i == 5) {
        const extra = encodePairs(["x-extra"], ["1"]);
        map.add(extra.dataStart + 12, 7, extra.dataStart + 20, 1);
      }
      values.reset();
      bag.clear();
      const path = values.headerEntry(map, 0);
      const urlLength = <usize>paths[i].indexOf("?");
      bag.set("request.path", path);
      bag.set("request.url_path", values.prefixView(path, urlLength));
      bag.set("request.useragent", values.headerEntry(map, 1));
      bag.set("response.time", values.timestampNanos(1_700_000_000_000_000_000 + <i64>i));
      expect(encoder.append(bag, i32.MAX_VALUE)).toBe(true);
      const fresh = new AttributeBag();
      fresh.setString("request.path", paths[i]);
      fresh.setString("request.url_path", paths[i].substring(0, <i32>urlLength));
      fresh.setString("request.useragent", agents[i]);
      fresh.set("response.time", AttributeValue.ofTimestampNanos(1_700_000_000_000_000_000 + <i64>i));
      reference.push(fresh);
    }
    expect(hex(encoder.finish())).toBe(hex(encodeReportRequest(reference, GLOBAL_WORD_COUNT)));
  });
});
