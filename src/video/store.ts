import type { TenantId } from '../identity/types.js';
import type {
  AssetId, AssetRecord, CallbackEvent, CallbackRecord, Format, NewAsset, NewPhoto, Page, PhotoId,
  PhotoRecord, PropertyId, PropertyInput, PropertyRecord, Template, VideoId, VideoRecord,
} from './types.js';

/** What to enqueue for the callback of a finished video, built from its final record. */
export type CallbackFor = (video: VideoRecord) => { url: string; event: CallbackEvent; body: string } | null;

export type VideoInput = { propertyId: PropertyId; template: Template; format: Format; callbackUrl: string | null; photoIds: PhotoId[] };

/**
 * Properties, photos, videos (the render queue), assets and completion callbacks of every
 * tenant. Methods return promises so that a network database (PostgreSQL) can implement the
 * same contract as SQLite; test/video/store-contract.ts is that contract.
 */
export interface VideoStore {
  createProperty(tenantId: TenantId, input: PropertyInput): Promise<PropertyRecord>;
  getProperty(tenantId: TenantId, id: PropertyId): Promise<PropertyRecord | null>;
  /** Newest first; `before` is the id the previous page ended on. */
  listProperties(tenantId: TenantId, limit: number, before: number | null): Promise<Page<PropertyRecord>>;
  photosOf(propertyIds: readonly PropertyId[]): Promise<Map<PropertyId, PhotoRecord[]>>;
  /** Records photos already stored under their final names, all or none; refuses past maxPerProperty. */
  addPhotos(propertyId: PropertyId, photos: readonly NewPhoto[], maxPerProperty: number): Promise<PhotoRecord[] | 'too_many'>;
  photosByIds(ids: readonly PhotoId[]): Promise<PhotoRecord[]>;

  createVideo(tenantId: TenantId, input: VideoInput): Promise<VideoRecord>;
  /** Queues the video unless the tenant already has `maxUnfinished` queued or rendering ('limit'); the count and the insert are one transaction. */
  createVideo(tenantId: TenantId, input: VideoInput, maxUnfinished: number): Promise<VideoRecord | 'limit'>;
  getVideo(tenantId: TenantId, id: VideoId): Promise<VideoRecord | null>;
  videoById(id: VideoId): Promise<VideoRecord | null>;
  /** Puts every video left 'rendering' by a stopped process back in the queue; answers how many. */
  requeueInterrupted(): Promise<number>;
  /**
   * Takes the next queued video and marks it rendering: the oldest of the first tenant after
   * `afterTenant` (by id, wrapping around) that has one, so tenants take turns.
   */
  claimNextQueued(afterTenant: TenantId | null): Promise<VideoRecord | null>;
  setProgress(id: VideoId, progress: number): Promise<void>;
  completeVideo(id: VideoId, assets: { video: NewAsset; poster: NewAsset }, callback: CallbackFor): Promise<VideoRecord>;
  failVideo(id: VideoId, error: string, callback: CallbackFor): Promise<VideoRecord>;

  listAssets(tenantId: TenantId, filter: { propertyId?: PropertyId; videoId?: VideoId }, limit: number, before: number | null): Promise<Page<AssetRecord>>;
  getAsset(tenantId: TenantId, id: AssetId): Promise<AssetRecord | null>;

  /** The tenant's callback signing secret, created with `fresh()` on first use. */
  callbackSecret(tenantId: TenantId, fresh: () => string): Promise<string>;
  rotateCallbackSecret(tenantId: TenantId, secret: string): Promise<void>;
  dueCallbacks(now: number, limit: number): Promise<CallbackRecord[]>;
  /** Records one delivery attempt: delivered, retry at `nextAttemptAt`, or given up. */
  recordCallbackAttempt(id: number, outcome: { status: CallbackRecord['status']; nextAttemptAt: number; error: string | null }): Promise<void>;
  callbacksOf(videoId: VideoId): Promise<CallbackRecord[]>;
}
