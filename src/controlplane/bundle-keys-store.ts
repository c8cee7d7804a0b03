/** One of the installation's bundle-signing keys as stored (see src/signing/bundle.ts). */
export interface BundleKeyRecord {
  /** Position in the chain, from 1; the highest signs. */
  seq: number;
  id: string;
  /** `ed25519:BASE64`. */
  publicKey: string;
  /** PKCS#8 PEM; never leaves the control plane. */
  privatePem: string;
  createdAt: string;
  previous: string | null;
  endorsement: string | null;
}

export interface BundleKeyRow {
  seq: number;
  id: string;
  public_key: string;
  private_pem: string;
  created_at: string;
  previous: string | null;
  endorsement: string | null;
}

export function bundleKeyOf(row: BundleKeyRow): BundleKeyRecord {
  return {
    seq: Number(row.seq),
    id: row.id,
    publicKey: row.public_key,
    privatePem: row.private_pem,
    createdAt: row.created_at,
    previous: row.previous,
    endorsement: row.endorsement,
  };
}
