import { type Command, Option } from "commander";
import { parseAdminPort, parseAdminTarget } from "./sidecar_admin.ts";

/**
 * The flags that point a debugging command at a running sidecar: `--admin
 * <url|host:port|port>` or `--proxyAdminPort <port>` (on 127.0.0.1, the
 * disco-agent flag's name). `--port` is not used for this: it filters
 * listeners in `proxy-config listener`.
 */
export function addAdminOptions(command: Command): Command {
  return command
    .addOption(
      new Option("--admin <url>", "admin address of a running sidecar: http://host:port, host:port or a port on 127.0.0.1").argParser(parseAdminTarget),
    )
    .addOption(new Option("--proxyAdminPort <port>", "admin port of a running sidecar on 127.0.0.1 (same as --admin <port>)").argParser(parseAdminPort));
}

/** The admin base URL the options name, if any (`--admin` wins over `--proxyAdminPort`). */
export function adminFrom(opts: { admin?: string; proxyAdminPort?: string }): string | undefined {
  return opts.admin ?? opts.proxyAdminPort;
}

/** Repeatable and comma-separated file flags: `-f a.yaml -f b.yaml` = `-f a.yaml,b.yaml`. */
export function collectFiles(value: string, previous: string[] | undefined): string[] {
  return [...(previous ?? []), ...value.split(",").filter((s) => s.length > 0)];
}

export const OUTPUT_FORMATS = ["short", "json"] as const;

export function outputOption(description = "output format"): Option {
  return new Option("-o, --output <format>", description).choices(OUTPUT_FORMATS).default("short");
}
