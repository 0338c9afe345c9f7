import { execFileSync } from "node:child_process";

/** One perf sample: the thread it was taken on and its call stack, leaf first ("symbol (dso)"). */
export interface PerfSample {
  thread: string;
  frames: string[];
}

/** The samples of a `perf record -g` file, read through `perf script`. */
export function perfSamples(perfData: string): PerfSample[] {
  const text = execFileSync("perf", ["script", "-i", perfData, "-F", "tid,ip,sym,dso"], {
    encoding: "utf8",
    maxBuffer: 1 << 30,
    stdio: ["ignore", "pipe", "ignore"],
  });
  return text
    .split("\n\n")
    .filter((b) => b.trim())
    .map((block) => {
      const [head, ...lines] = block.trim().split("\n");
      return { thread: head.trim().split(/\s+/)[0], frames: lines.map((l) => l.trim().split(/\s+/).slice(1).join(" ")) };
    });
}
