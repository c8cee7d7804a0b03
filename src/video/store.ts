import type { TenantId } from '../identity/types.js';
import type { Lease } from '../store/lease.js';
import type {
  AssetId,
  AssetRecord,
  AudioId,
  AudioRecord,
  BrandingInput,
  BrandingRecord,
  CallbackEvent,
  CallbackRecord,
  Format,
  NewAsset,
  NewPhoto,
  Page,
  PhotoId,
  PhotoRecord,
  PropertyId,
  PropertyInput,
  PropertyRecord,
  NewAudio,
  Room,
  Template,
  VideoOptions,
  VideoId,
  VideoRecord,
  VideoStatus,
} from './types.js';

/** What to enqueue for the callback of a finished video, built from its final record. */
export type CallbackFor = (video: VideoRecord) => { url: string; event: CallbackEvent; body: string } | null;

/** Storage keys of the files a delete left without a record: the caller removes them from storage. */
export interface Orphans {
  photoKeys: string[];
  assetKeys: string[];
  /** Logos and audio tracks (the `media` area). */
  mediaKeys?: string[];
}

/**
 * What a delete did: removed rows (and names the files now orphaned), found nothing of the
 * tenant's, or refused because a render needs what it would remove (that video named).
 */
export type DeleteOutcome = { kind: 'deleted'; orphans: Orphans } | { kind: 'not_found' } | { kind: 'busy'; videoId: VideoId; status: 'queued' | 'rendering' };

export interface VideoFilter {
  propertyId?: PropertyId;
  status?: VideoStatus;
}

export type VideoInput = {
  propertyId: PropertyId;
  template: Template;
  format: Format;
  callbackUrl: string | null;
  photoIds: PhotoId[];
  options?: VideoOptions;
};

/**
 * An Idempotency-Key claimed with a create: the first request with `key` makes the videos and
 * records them with `hash` (of its body); a repeat within `ttlMs` gets them again, and a
 * repeat with another body is refused.
 */
export interface IdempotencyClaim {
  key: string;
  hash: string;
  ttlMs: number;
}

export type CreateOutcome =
  | { kind: 'created'; videos: VideoRecord[] }
  | { kind: 'replayed'; videos: VideoRecord[] }
  | { kind: 'key_reused' }
  | { kind: 'limit' };

export type CancelOutcome = { kind: 'cancelled'; video: VideoRecord } | { kind: 'not_found' } | { kind: 'finished'; video: VideoRecord };

/**
 * Properties, photos, videos (the render queue), assets and completion callbacks of every
 * tenant. Methods return promises so that a network database (PostgreSQL) can implement the
 * same contract as SQLite; test/video/store-contract.ts is that contract.
 */
export interface VideoStore {
  /**
   * True when one process serves the store (SQLite): nothing but this process renders from it,
   * so what a previous run left behind (renders marked rendering, scratch files) is its own.
   */
  readonly exclusive: boolean;
  createProperty(tenantId: TenantId, input: PropertyInput): Promise<PropertyRecord>;
  getProperty(tenantId: TenantId, id: PropertyId): Promise<PropertyRecord | null>;
  /** The tenant of any property: for signed photo URLs, which carry no credential (the caller checks the tenant). */
  propertyTenant(id: PropertyId): Promise<TenantId | null>;
  /** Newest first; `before` is the id the previous page ended on. */
  listProperties(tenantId: TenantId, limit: number, before: number | null): Promise<Page<PropertyRecord>>;
  photosOf(propertyIds: readonly PropertyId[]): Promise<Map<PropertyId, PhotoRecord[]>>;
  /** Records photos already stored under their final names, all or none; refuses past maxPerProperty. */
  addPhotos(propertyId: PropertyId, photos: readonly NewPhoto[], maxPerProperty: number): Promise<PhotoRecord[] | 'too_many'>;
  photosByIds(ids: readonly PhotoId[]): Promise<PhotoRecord[]>;
  /** Tags a photo with a room (null clears it); null when the tenant has no such photo. */
  setPhotoRoom(tenantId: TenantId, propertyId: PropertyId, photoId: PhotoId, room: Room | null): Promise<PhotoRecord | null>;

  getBranding(tenantId: TenantId): Promise<BrandingRecord | null>;
  /**
   * Changes the fields of the tenant's branding that `change` names, on the stored branding (or
   * `defaults` when none is stored) as it is at the write, so a change made meanwhile to other
   * fields (a logo uploaded while the colours are set) stays; answers the storage key of a logo it
   * replaced (the caller removes the file).
   */
  putBranding(
    tenantId: TenantId,
    change: Partial<BrandingInput>,
    defaults: BrandingInput,
  ): Promise<{ branding: BrandingRecord; replacedLogoKey: string | null }>;
  /** Records an uploaded audio track; refuses past `maxPerTenant` tracks. */
  addAudio(tenantId: TenantId, audio: NewAudio, maxPerTenant: number): Promise<AudioRecord | 'too_many'>;
  getAudio(tenantId: TenantId, id: AudioId): Promise<AudioRecord | null>;
  listAudio(tenantId: TenantId, limit: number, before: number | null): Promise<Page<AudioRecord>>;
  /** Deletes a track unless a queued or rendering video uses it ('busy'); orphans.photoKeys names its file. */
  deleteAudio(tenantId: TenantId, id: AudioId): Promise<DeleteOutcome>;

  createVideo(tenantId: TenantId, input: VideoInput): Promise<VideoRecord>;
  /** Queues the video unless the tenant already has `maxUnfinished` queued or rendering ('limit'); the count and the insert are one transaction. */
  createVideo(tenantId: TenantId, input: VideoInput, maxUnfinished: number): Promise<VideoRecord | 'limit'>;
  /**
   * Queues one video per input (several formats of one request share a batch and render
   * together), all or none: none when the tenant would pass `maxUnfinished` queued or
   * rendering videos. With an idempotency claim, a key already used answers its videos (or
   * key_reused for another body) and creates nothing.
   */
  createVideos(tenantId: TenantId, inputs: readonly VideoInput[], maxUnfinished: number, idempotency: IdempotencyClaim | null): Promise<CreateOutcome>;
  /** Claims the other queued videos of a batch for the holder of its first claim (they render in the same run). */
  claimBatch(lease: Lease, batchId: VideoId): Promise<VideoRecord[]>;
  /** Cancels a queued or rendering video (its callback enqueued); a finished one is answered as it is. */
  cancelVideo(tenantId: TenantId, id: VideoId, callback: CallbackFor): Promise<CancelOutcome>;
  getVideo(tenantId: TenantId, id: VideoId): Promise<VideoRecord | null>;
  /** Newest first; `before` is the id the previous page ended on. */
  listVideos(tenantId: TenantId, filter: VideoFilter, limit: number, before: number | null): Promise<Page<VideoRecord>>;
  videoById(id: VideoId): Promise<VideoRecord | null>;
  /**
   * At start, before the first claim. A store that one process serves (SQLite) puts every
   * video a previous run left 'rendering' back in the queue and answers how many. A store
   * shared by replicas answers 0: a live replica's render cannot be told from a dead one's,
   * so those wait for their leases to run out.
   */
  requeueInterrupted(): Promise<number>;
  /**
   * Takes the next video to render, marks it rendering and leases it to `lease.owner`: a
   * render whose lease ran out (its holder died) first, else the oldest queued video of the
   * first tenant after `afterTenant` (by id, wrapping around) that has one, so tenants take turns.
   */
  claimNextQueued(lease: Lease, afterTenant: TenantId | null): Promise<VideoRecord | null>;
  /** Extends a render's lease by `lease.ms` from now; false when `lease.owner` no longer holds it (the render must stop). */
  renewRender(lease: Lease, id: VideoId): Promise<boolean>;
  /** Puts the renders `owner` holds back in the queue (a stopping worker hands them on); answers how many. */
  releaseRenders(owner: string): Promise<number>;
  setProgress(id: VideoId, progress: number): Promise<void>;
  /** Finishes a render `owner` still holds; null (nothing written) when its lease passed to another worker. */
  completeVideo(owner: string, id: VideoId, assets: { video: NewAsset; poster: NewAsset }, callback: CallbackFor): Promise<VideoRecord | null>;
  failVideo(owner: string, id: VideoId, error: string, callback: CallbackFor): Promise<VideoRecord | null>;

  listAssets(tenantId: TenantId, filter: { propertyId?: PropertyId; videoId?: VideoId }, limit: number, before: number | null): Promise<Page<AssetRecord>>;
  getAsset(tenantId: TenantId, id: AssetId): Promise<AssetRecord | null>;
  /** Any tenant's asset: for signed URLs, which carry no credential (the caller checks the tenant). */
  assetById(id: AssetId): Promise<AssetRecord | null>;

  /**
   * Deletes a video that is not rendering (a queued one leaves the queue), with its assets and
   * pending callbacks, in one transaction. A rendering video is 'busy'.
   */
  deleteVideo(tenantId: TenantId, id: VideoId): Promise<DeleteOutcome>;
  /**
   * Deletes one photo of a property, unless a queued or rendering video of the tenant shows it
   * ('busy'). Finished videos keep their files and list the deleted photo's id in photoIds.
   */
  deletePhoto(tenantId: TenantId, propertyId: PropertyId, photoId: PhotoId): Promise<DeleteOutcome>;
  /**
   * Deletes a property with everything under it (photos, videos, assets, pending callbacks) in
   * one transaction; queued videos leave the queue. 'busy' while one of its videos is rendering.
   */
  deleteProperty(tenantId: TenantId, id: PropertyId): Promise<DeleteOutcome>;

  /** The tenant's callback signing secret, created with `fresh()` on first use. */
  callbackSecret(tenantId: TenantId, fresh: () => string): Promise<string>;
  rotateCallbackSecret(tenantId: TenantId, secret: string): Promise<void>;
  /** Leases up to `limit` pending callbacks due at `now` whose lease (if any) has run out. */
  claimCallbacks(lease: Lease, now: number, limit: number): Promise<CallbackRecord[]>;
  /**
   * Records one delivery attempt (delivered, retry at `nextAttemptAt`, or given up) and clears
   * the lease; false, writing nothing, when `owner` no longer holds the callback.
   */
  recordCallbackAttempt(
    owner: string,
    id: number,
    outcome: { status: CallbackRecord['status']; nextAttemptAt: number; error: string | null },
  ): Promise<boolean>;
  callbacksOf(videoId: VideoId): Promise<CallbackRecord[]>;
}
