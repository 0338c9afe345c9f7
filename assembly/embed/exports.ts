export function filter_version(): string {
  return "0.1.0";
}
