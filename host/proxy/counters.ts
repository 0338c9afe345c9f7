/**
 * Named counters a stage of the data path adds to (`rbac.allowed`,
 * `route.outbound`, `upstream_rq_pending_overflow`, …), shown on /stats. One
 * instance per sidecar, handed to each stage that counts.
 */
export class Counters {
  private readonly values = new Map<string, number>();

  bump(name: string): void {
    this.values.set(name, (this.values.get(name) ?? 0) + 1);
  }

  entries(): IterableIterator<[string, number]> {
    return this.values.entries();
  }
}
