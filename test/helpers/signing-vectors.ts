import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fixtures } from './paths.js';

/** One request-signing test vector of test/fixtures/signing/vectors.json. */
export interface SigningVector {
  name: string;
  key: string;
  method: string;
  target: string;
  timestamp: number;
  body: string;
  canonical: string;
  signature: string;
}

export const SIGNING_VECTORS_FILE = join(fixtures, 'signing', 'vectors.json');

/** The vectors the control plane's signing tests and every reference client's tests check. */
export function signingVectors(): SigningVector[] {
  return (JSON.parse(readFileSync(SIGNING_VECTORS_FILE, 'utf8')) as { vectors: SigningVector[] }).vectors;
}
