/**
 * Signed configuration bundles (after TUF's rules), in one dependency-free module: only
 * node:crypto's ed25519 is used.
 *
 *   message   = "brainstem-bundle/1\n" + SCOPE + "\n" + hex(SHA-256(body bytes as served))
 *   signature = base64(ed25519(privateKey, message))
 *
 * SCOPE is the server id the bundle was published for (a control-plane bundle), or `*` (a
 * self-hosted bundle directory signed with `brainstem bundle sign`, valid for any server). So a
 * signature covers the exact bytes, the version inside them and the server they are for: it
 * cannot be moved to another bundle (mix-and-match) or another server.
 *
 * A key rotation is endorsed: the new public key is signed by the old private key,
 *
 *   endorsement = base64(ed25519(oldPrivateKey, "brainstem-key/1\n" + NEW_KEY_ID + "\n" + NEW_PUBLIC_KEY))
 *
 * so a sidecar that pinned the old key can walk the chain to the new one and pin it.
 */
import { createHash, createPrivateKey, createPublicKey, generateKeyPairSync, sign, verify, type KeyObject } from 'node:crypto';

/** Response headers of a signed pull: the signing key's id and the signature. */
export const BUNDLE_KEY_ID_HEADER = 'x-bundle-key-id';
export const BUNDLE_SIGNATURE_HEADER = 'x-bundle-signature';
/** The scope of a bundle valid for any server (a signed bundle directory). */
export const ANY_SERVER = '*';
/** The signature file beside bundle.json in a signed bundle directory. */
export const BUNDLE_SIGNATURE_FILE = 'bundle.sig';
/** Public keys are written `ed25519:` plus the raw 32 bytes in base64. */
export const PUBLIC_KEY_PREFIX = 'ed25519:';

/** The DER prefix of an ed25519 SubjectPublicKeyInfo; the raw 32-byte key follows it. */
const SPKI_PREFIX = Buffer.from('302a300506032b6570032100', 'hex');

export interface BundleKeyPair {
  keyId: string;
  /** `ed25519:BASE64`. */
  publicKey: string;
  /** PKCS#8 PEM. */
  privatePem: string;
}

export function newKeyPair(): BundleKeyPair {
  const { publicKey, privateKey } = generateKeyPairSync('ed25519');
  const text = publicKeyText(publicKey);
  return { keyId: keyIdOf(text), publicKey: text, privatePem: privateKey.export({ format: 'pem', type: 'pkcs8' }).toString() };
}

/** `ed25519:BASE64` of a public key object. */
export function publicKeyText(key: KeyObject): string {
  const der = key.export({ format: 'der', type: 'spki' });
  return PUBLIC_KEY_PREFIX + der.subarray(SPKI_PREFIX.length).toString('base64');
}

/** The public key of a private key (PEM), as text. */
export function publicKeyOfPrivate(privatePem: string): string {
  return publicKeyText(createPublicKey(createPrivateKey(privatePem)));
}

/** Parses `ed25519:BASE64` (or a PEM public key); throws a clear Error otherwise. */
export function parsePublicKey(text: string): KeyObject {
  const t = text.trim();
  if (t.startsWith('-----BEGIN PUBLIC KEY-----')) {
    const key = createPublicKey(t);
    if (key.asymmetricKeyType !== 'ed25519') throw new Error(`not an ed25519 public key (${key.asymmetricKeyType})`);
    return key;
  }
  if (!t.startsWith(PUBLIC_KEY_PREFIX)) throw new Error(`a bundle public key is written ${PUBLIC_KEY_PREFIX}BASE64 (32 bytes), got "${t.slice(0, 40)}"`);
  const raw = Buffer.from(t.slice(PUBLIC_KEY_PREFIX.length), 'base64');
  if (raw.length !== 32) throw new Error(`an ed25519 public key is 32 bytes, got ${raw.length}`);
  return createPublicKey({ key: Buffer.concat([SPKI_PREFIX, raw]), format: 'der', type: 'spki' });
}

/** Normalises any accepted public-key text to `ed25519:BASE64`. */
export function canonicalPublicKey(text: string): string {
  return publicKeyText(parsePublicKey(text));
}

/** A key's id: the first 16 hex digits of SHA-256 over its raw 32 bytes. */
export function keyIdOf(publicKey: string): string {
  const raw = Buffer.from(canonicalPublicKey(publicKey).slice(PUBLIC_KEY_PREFIX.length), 'base64');
  return createHash('sha256').update(raw).digest('hex').slice(0, 16);
}

function bundleMessage(scope: string, body: string | Uint8Array): Buffer {
  return Buffer.from(`brainstem-bundle/1\n${scope}\n${createHash('sha256').update(body).digest('hex')}`);
}

function keyMessage(keyId: string, publicKey: string): Buffer {
  return Buffer.from(`brainstem-key/1\n${keyId}\n${publicKey}`);
}

/** Signs a bundle's bytes for `scope` (a server id, or ANY_SERVER); base64. */
export function signBundle(privateKey: KeyObject | string, scope: string, body: string | Uint8Array): string {
  return sign(null, bundleMessage(scope, body), privateKey).toString('base64');
}

/** Whether `signature` (base64) is `publicKey`'s over the bundle bytes for `scope`. Never throws. */
export function verifyBundle(publicKey: KeyObject, scope: string, body: string | Uint8Array, signature: string): boolean {
  try {
    const sig = Buffer.from(signature, 'base64');
    return sig.length === 64 && verify(null, bundleMessage(scope, body), publicKey, sig);
  } catch {
    return false;
  }
}

/** The old key's endorsement of a new one (base64). */
export function endorseKey(oldPrivate: KeyObject | string, newKeyId: string, newPublicKey: string): string {
  return sign(null, keyMessage(newKeyId, newPublicKey), oldPrivate).toString('base64');
}

export function verifyEndorsement(oldPublic: KeyObject, newKeyId: string, newPublicKey: string, endorsement: string): boolean {
  try {
    return verify(null, keyMessage(newKeyId, newPublicKey), oldPublic, Buffer.from(endorsement, 'base64'));
  } catch {
    return false;
  }
}

/** One entry of `GET /v1/config/keys`. */
export interface PublishedKey {
  id: string;
  algorithm: 'ed25519';
  publicKey: string;
  createdAt: string;
  /** The key that signs bundles now (the newest). */
  active: boolean;
  /** The id of the key before this one, null for the first. */
  previous: string | null;
  /** The previous key's signature over this one (see endorseKey), null for the first. */
  endorsement: string | null;
}

/**
 * Walks a key list from the pinned key to `wanted`: each step must be endorsed by the key
 * before it. Returns the chain's keys after the pinned one (the last is `wanted`), or null
 * when `wanted` cannot be reached from the pin (a key the pinned one never endorsed).
 */
export function endorsedPath(pinnedKeyId: string, pinnedKey: KeyObject, keys: readonly PublishedKey[], wanted: string): PublishedKey[] | null {
  const byPrevious = new Map<string, PublishedKey>();
  for (const k of keys) if (k.previous) byPrevious.set(k.previous, k);
  const path: PublishedKey[] = [];
  let currentId = pinnedKeyId;
  let current = pinnedKey;
  // Bounded by the list: each step moves to a key not seen before.
  for (let i = 0; i < keys.length; i++) {
    const next = byPrevious.get(currentId);
    if (!next || next.endorsement === null) return null;
    let nextKey: KeyObject;
    try {
      nextKey = parsePublicKey(next.publicKey);
    } catch {
      return null;
    }
    if (keyIdOf(next.publicKey) !== next.id || !verifyEndorsement(current, next.id, next.publicKey, next.endorsement)) return null;
    path.push(next);
    if (next.id === wanted) return path;
    currentId = next.id;
    current = nextKey;
  }
  return null;
}
