/**
 * disco-discovery's listeners a test does not look at, turned off (their
 * defaults are fixed ports, which parallel tests would fight over).
 */
export const SIDE_LISTENERS_OFF: readonly string[] = [
  "--secureGrpcAddr",
  "",
  "--monitoringAddr",
  "",
  "--httpsAddr",
  "",
  "--ctrlz_port",
  "0",
  "--ctrlz_address",
  "127.0.0.1",
];
