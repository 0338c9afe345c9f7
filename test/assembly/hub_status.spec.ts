// google.rpc codes, their names, and the HTTP status of a local reply:
// the table of upstream src/istio/utils/status.cc (hub-client.md §2.8).
import { httpStatusForCode, StatusCode, statusCodeName } from "../../assembly/status_codes";

class Row {
  constructor(
    public code: i32,
    public name: string,
    public http: i32,
  ) {}
}

const TABLE: Row[] = [
  new Row(0, "OK", 200),
  new Row(1, "CANCELLED", 499),
  new Row(2, "UNKNOWN", 500),
  new Row(3, "INVALID_ARGUMENT", 400),
  new Row(4, "DEADLINE_EXCEEDED", 504),
  new Row(5, "NOT_FOUND", 404),
  new Row(6, "ALREADY_EXISTS", 409),
  new Row(7, "PERMISSION_DENIED", 403),
  new Row(8, "RESOURCE_EXHAUSTED", 429),
  new Row(9, "FAILED_PRECONDITION", 400),
  new Row(10, "ABORTED", 409),
  new Row(11, "OUT_OF_RANGE", 400),
  new Row(12, "UNIMPLEMENTED", 501),
  new Row(13, "INTERNAL", 500),
  new Row(14, "UNAVAILABLE", 503),
  new Row(15, "DATA_LOSS", 500),
  new Row(16, "UNAUTHENTICATED", 401),
];

describe("google.rpc status codes", () => {
  it("names every code and maps it to upstream's HTTP status", () => {
    for (let i = 0; i < TABLE.length; i++) {
      const row = TABLE[i];
      expect(statusCodeName(row.code)).toBe(row.name);
      expect(httpStatusForCode(row.code)).toBe(row.http, row.name);
    }
  });

  it("numbers the enum as google/rpc/code.proto", () => {
    expect(<i32>StatusCode.OK).toBe(0);
    expect(<i32>StatusCode.PERMISSION_DENIED).toBe(7);
    expect(<i32>StatusCode.RESOURCE_EXHAUSTED).toBe(8);
    expect(<i32>StatusCode.UNAVAILABLE).toBe(14);
    expect(<i32>StatusCode.UNAUTHENTICATED).toBe(16);
  });

  it("answers 500 and CODE_<n> for codes outside the table", () => {
    const unknown: i32[] = [17, 99, -1, i32.MIN_VALUE, i32.MAX_VALUE];
    for (let i = 0; i < unknown.length; i++) {
      expect(httpStatusForCode(unknown[i])).toBe(500);
      expect(statusCodeName(unknown[i])).toBe("CODE_" + unknown[i].toString());
    }
  });
});
