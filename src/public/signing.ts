/**
 * What a sidecar-like client of the control plane imports to sign its requests (spec 001 §5).
 * The implementation, `src/signing/request.ts`, uses only node:crypto: copy that one file into
 * another project as is. The algorithm and a worked example are in docs/controlplane.md (request signing).
 */
export {
  canonicalString,
  signature,
  signRequest,
  verifyRequest,
  SIGNATURE_HEADER,
  TIMESTAMP_HEADER,
  SIGNATURE_WINDOW_S,
  type SignedParts,
  type VerifyResult,
} from '../signing/request.js';
