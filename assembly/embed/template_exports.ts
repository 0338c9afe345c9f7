// Exports of the URI-template parser for hosts that call the module directly
// (configuration validation).
