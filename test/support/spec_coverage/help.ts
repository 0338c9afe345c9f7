// Reading a program's `--help` (commander's layout): its options with their
// descriptions and defaults, and its subcommands with their aliases.

export interface HelpOption {
  readonly long: string;
  readonly short?: string;
  /** `<value>` or `[bool]`, as printed. */
  readonly argument?: string;
  readonly description: string;
  /** The `(default: …)` text, quotes removed, when printed. */
  readonly default?: string;
}

export interface HelpCommand {
  readonly name: string;
  readonly aliases: readonly string[];
  readonly description: string;
}

export interface Help {
  readonly usage: string;
  readonly description: string;
  readonly options: ReadonlyMap<string, HelpOption>;
  readonly commands: readonly HelpCommand[];
}

/** The entries of one `Options:` or `Commands:` block, continuation lines joined. */
function entries(block: string[]): Array<{ term: string; text: string }> {
  const out: Array<{ term: string; text: string }> = [];
  for (const line of block) {
    const head = /^ {2}(\S.*?)(?: {2,}(\S.*))?$/.exec(line);
    if (head && !/^ {3}/.test(line)) out.push({ term: head[1], text: head[2] ?? "" });
    else if (out.length > 0 && line.trim()) {
      const last = out[out.length - 1];
      last.text = `${last.text} ${line.trim()}`.trim();
    }
  }
  return out;
}

export function parseHelp(text: string): Help {
  const lines = text.split("\n");
  const blocks = new Map<string, string[]>();
  let current: string[] | undefined;
  const descriptionLines: string[] = [];
  for (const line of lines.slice(1)) {
    if (/^(Options|Commands|Global Options|Arguments):$/.test(line)) {
      current = [];
      blocks.set(line.slice(0, -1), current);
    } else if (current) current.push(line);
    else if (line.trim()) descriptionLines.push(line.trim());
  }
  const options = new Map<string, HelpOption>();
  for (const key of ["Options", "Global Options"]) {
    for (const { term, text: described } of entries(blocks.get(key) ?? [])) {
      const m = /^(?:(-\w), )?(--[\w-]+)(?: ([<[].*[>\]]))?$/.exec(term);
      if (!m) continue;
      const dflt = /\(default: (.*)\)$/.exec(described);
      const option: HelpOption = {
        long: m[2],
        ...(m[1] ? { short: m[1] } : {}),
        ...(m[3] ? { argument: m[3] } : {}),
        description: described.replace(/\s*\(default: .*\)$/, ""),
        ...(dflt ? { default: dflt[1].replace(/^"(.*)"$/, "$1") } : {}),
      };
      if (!options.has(option.long)) options.set(option.long, option);
    }
  }
  const commands = entries(blocks.get("Commands") ?? []).map(({ term, text: described }) => {
    const names = term.split(" ")[0].split("|");
    return { name: names[0], aliases: names.slice(1), description: described };
  });
  return { usage: lines[0] ?? "", description: descriptionLines.join(" "), options, commands };
}
