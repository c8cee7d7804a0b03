import type { Authenticator } from '../identity/auth.js';
import type { TenantId, TenantRecord } from '../identity/types.js';
import type { Logger } from '../log.js';
import type { PrivateUrls, Resolve } from '../net/ssrf.js';
import type { ByteBudget } from '../http/byte-budget.js';
import type { AssetUrlSigner } from './signed-urls.js';
import type { AssetStorage } from './storage.js';
import type { CallbackFor, VideoStore } from './store.js';
import type { VideoId } from './types.js';
import type { UploadLimits } from './uploads.js';

export interface VideoRoutesOptions {
  store: VideoStore;
  auth: Authenticator;
  dataDir: string;
  /** Where photos and rendered assets are stored. */
  storage: AssetStorage;
  uploads: UploadLimits;
  /** Bytes of JSON photo uploads held in memory at once, across all requests. */
  jsonBudget: ByteBudget;
  /** Most photos one property may have. */
  maxPhotosPerProperty: number;
  allowPrivateCallbacks: PrivateUrls;
  /** DNS for the SSRF guard on callback URLs; default the system resolver. */
  resolve?: Resolve | undefined;
  logger: Logger;
  /** Told when a video is queued, so rendering starts at once. */
  onQueued: () => void;
  /** Signs and checks the expiring asset URLs. */
  signer: AssetUrlSigner;
  /** The origin signed URLs start with (SERVICE_PUBLIC_URL); default the request's scheme and Host. */
  publicUrl?: string | undefined;
  scheme: 'http' | 'https';
  /** A signed URL carries no credential: its asset's tenant is looked up to check it is active and on the plan. */
  getTenant: (id: TenantId) => Promise<TenantRecord | null>;
  now: () => number;
  /** Whether a voice-over can be read (the TTS add-on runs); false refuses `voiceover: true` with the reason. */
  voiceAvailable: boolean;
  /** ffprobe, to check uploaded audio; null refuses audio uploads with the reason. */
  ffprobe: string | null;
  /** The callback enqueued when a video is cancelled. */
  callbackFor: CallbackFor;
  /** Told when a video was cancelled, so a render of it stops at once. */
  onCancelled: (id: VideoId) => void;
}
