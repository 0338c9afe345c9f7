/**
 * The outbound listener's properties for the Wasm filter, per destination
 * host (`mesh.destination_service`): one frozen object for all of a host's
 * requests, which also lets the filter's host reuse their serialized answers
 * (RequestProperties.answersKey); past the bound a new host gets an object
 * of its own each time.
 */
export class DestinationProperties {
  private readonly byHost = new Map<string, Readonly<Record<string, string>>>();

  /** Destination hosts whose object is kept. */
  static readonly KEPT = 1024;

  forAuthority(authority: string): Readonly<Record<string, string>> {
    const host = hostOf(authority);
    let known = this.byHost.get(host);
    if (known === undefined) {
      known = Object.freeze({ "mesh.destination_service": host });
      if (this.byHost.size < DestinationProperties.KEPT) this.byHost.set(host, known);
    }
    return known;
  }
}

function hostOf(authority: string): string {
  if (authority.startsWith("[")) return authority.slice(0, authority.indexOf("]") + 1);
  const colon = authority.lastIndexOf(":");
  return colon >= 0 ? authority.slice(0, colon) : authority;
}
