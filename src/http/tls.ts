import { createPrivateKey, X509Certificate, type KeyObject } from 'node:crypto';
import { readFileSync } from 'node:fs';

export interface TlsFiles {
  certFile: string;
  keyFile: string;
  passphrase?: string;
}

/**
 * Checks a certificate and key pair before uWebSockets.js is given it: uWS says only "App
 * construction failed" for a missing file, a file that is not PEM and a key that does not
 * match alike. Throws an Error naming the file and what is wrong with it.
 */
export function checkTlsFiles(tls: TlsFiles): void {
  const certPem = readPem(tls.certFile, 'certificate');
  const keyPem = readPem(tls.keyFile, 'private key');
  let cert: X509Certificate;
  try {
    cert = new X509Certificate(certPem);
  } catch (err) {
    throw new Error(`the TLS certificate ${tls.certFile} is not a PEM certificate (${(err as Error).message})`);
  }
  let key: KeyObject;
  try {
    key = createPrivateKey({ key: keyPem, ...(tls.passphrase ? { passphrase: tls.passphrase } : {}) });
  } catch (err) {
    throw new Error(`the TLS private key ${tls.keyFile} is not a usable PEM private key (${(err as Error).message})`);
  }
  if (!cert.checkPrivateKey(key)) throw new Error(`the TLS private key ${tls.keyFile} does not belong to the certificate ${tls.certFile}`);
}

function readPem(file: string, what: string): Buffer {
  try {
    return readFileSync(file);
  } catch (err) {
    throw new Error(`the TLS ${what} ${file} cannot be read (${(err as NodeJS.ErrnoException).code ?? (err as Error).message})`);
  }
}
