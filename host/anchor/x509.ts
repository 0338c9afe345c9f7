import { webcrypto } from "node:crypto";
import { installReflectMetadata } from "./reflect_metadata.ts";

// @peculiar/x509 loads tsyringe, which needs the Reflect metadata functions at
// load time. A static import would be hoisted above this call (and esbuild
// hoists external imports to the top of the bundle), hence the dynamic import.
installReflectMetadata();

/** @peculiar/x509, loaded after the Reflect metadata shim, on Node's WebCrypto. */
export const x509: typeof import("@peculiar/x509") = await import("@peculiar/x509");
x509.cryptoProvider.set(webcrypto as unknown as Crypto);
