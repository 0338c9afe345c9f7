import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, it } from "node:test";
import ts from "typescript";
import { LOG_LEVELS } from "../../host/wasm/filter_module.ts";

// The proxy-wasm ABI's enumerations are written twice: in the module
// (assembly/abi/enums.ts, AssemblyScript) and in the host
// (host/wasm/abi_types.ts). A value that differs would make the module and
// the host disagree on the wire without either failing to compile; this
// holds the two equal. The host declares the whole ABI, the module only
// what it uses: every member of the module's enums must be the host's, with
// the same value.

const ROOT = join(import.meta.dirname, "..", "..");

/** The `const enum` declarations of a file: enum name → member name → value. */
function constEnums(path: string): Map<string, Map<string, number>> {
  const source = ts.createSourceFile(path, readFileSync(join(ROOT, path), "utf8"), ts.ScriptTarget.ES2022, true);
  const enums = new Map<string, Map<string, number>>();
  for (const statement of source.statements) {
    if (!ts.isEnumDeclaration(statement)) continue;
    const members = new Map<string, number>();
    for (const member of statement.members) {
      const init = member.initializer;
      assert.ok(init && ts.isNumericLiteral(init), `${path}: ${statement.name.text}.${member.name.getText(source)} has no literal value`);
      members.set(member.name.getText(source), Number(init.text));
    }
    enums.set(statement.name.text, members);
  }
  return enums;
}

const moduleEnums = constEnums("assembly/abi/enums.ts");
const hostEnums = constEnums("host/wasm/abi_types.ts");

/** The module's enum names → the host's, where they differ. */
const HOST_NAME: Record<string, string> = { Status: "WasmStatus", MetricType: "MetricKind" };

describe("proxy-wasm ABI enumerations: module and host agree", () => {
  it("every enum of the module has a host counterpart (LogLevel: the host's LOG_LEVELS)", () => {
    for (const name of moduleEnums.keys()) {
      if (name === "LogLevel") continue;
      assert.ok(hostEnums.has(HOST_NAME[name] ?? name), `host/wasm/abi_types.ts has no enum ${HOST_NAME[name] ?? name} (assembly/abi/enums.ts ${name})`);
    }
  });

  for (const [name, members] of moduleEnums) {
    if (name === "LogLevel") {
      it("LogLevel: each level's value is its index in the host's LOG_LEVELS", () => {
        for (const [member, value] of members) assert.equal(LOG_LEVELS[value], member.toLowerCase(), `LogLevel.${member} = ${value}`);
        assert.equal(members.size, LOG_LEVELS.length);
      });
      continue;
    }
    const hostName = HOST_NAME[name] ?? name;
    it(`${name} (host ${hostName}): same members, same values`, () => {
      const host = hostEnums.get(hostName);
      assert.ok(host);
      for (const [member, value] of members) assert.equal(host.get(member), value, `${name}.${member}: module ${value}, host ${host.get(member)}`);
    });
  }

  it("the host's values are distinct within each enum", () => {
    for (const [name, members] of hostEnums) assert.equal(new Set(members.values()).size, members.size, `${name} repeats a value`);
  });
});
