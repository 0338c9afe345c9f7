// Exports of the regex engine for hosts that call the module directly
// (configuration validation, the hub server, property tests).
