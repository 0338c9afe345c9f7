import { webcrypto } from "node:crypto";
import { installReflectMetadata } from "./reflect_metadata.ts";

// @peculiar/x509 loads tsyringe, which needs the Reflect metadata functions at
// load time. A static import would be hoisted above this call (and esbuild
// hoists external imports to the top of the bundle), hence the dynamic import.
installReflectMetadata();

const loaded: typeof import("@peculiar/x509") & { default?: typeof import("@peculiar/x509") } = await import("@peculiar/x509");
/**
 * @peculiar/x509, loaded after the Reflect metadata shim, on Node's WebCrypto.
 * A CommonJS package: Node's import gives its exports by name and as
 * `default`; bundled into build/out, it gives them as `default` only.
 */
export const x509: typeof import("@peculiar/x509") = loaded.default ?? loaded;
x509.cryptoProvider.set(webcrypto as unknown as Crypto);
