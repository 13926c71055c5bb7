// Single entry point to @peculiar/x509: installs the Reflect shim it needs
// before the library loads, and points it at Node's WebCrypto.
import './reflect-metadata.js';
import * as x509 from '@peculiar/x509';

x509.cryptoProvider.set(globalThis.crypto);

export { x509 };
