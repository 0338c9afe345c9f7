// The random source of the retry jitter. The module has no random import a
// proxy provides everywhere (AssemblyScript's Math.random needs env.seed,
// which no proxy has), so the plugin seeds this generator from what the host
// hands it — the clock at configuration and the root id — which differs from
// proxy to proxy and worker to worker: enough to spread retries, which is all
// jitter is for. splitmix64 (Steele, Lea, Flood 2014): tiny, full-period.

export class Jitter {
  private state: u64;

  constructor(seed: u64) {
    this.state = seed;
  }

  /** The next 64 random bits. */
  nextU64(): u64 {
    this.state += 0x9e3779b97f4a7c15;
    let z = this.state;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9;
    z = (z ^ (z >> 27)) * 0x94d049bb133111eb;
    return z ^ (z >> 31);
  }

  /** A number in [0, 1) with 53 random bits. */
  next01(): f64 {
    return <f64>(this.nextU64() >> 11) / 9007199254740992.0;
  }
}
