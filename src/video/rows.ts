import type { TenantId } from '../identity/types.js';
import type {
  AssetId,
  AssetKind,
  AssetRecord,
  AudioId,
  AudioRecord,
  BrandFont,
  BrandingInput,
  BrandingRecord,
  CallbackEvent,
  CallbackRecord,
  Format,
  ImageType,
  Page,
  PhotoId,
  PhotoRecord,
  PropertyId,
  PropertyRecord,
  Room,
  Template,
  VideoOptions,
  VideoId,
  VideoRecord,
  VideoStatus,
} from './types.js';

/** Rows of the video tables as both stores read them (the PostgreSQL schema keeps the SQLite one column for column). */
export interface PropertyRow {
  id: number;
  tenant_id: number;
  title: string;
  address: string;
  city: string | null;
  price: number | null;
  currency: string | null;
  bedrooms: number | null;
  bathrooms: number | null;
  area: number | null;
  description: string | null;
  created_at: string;
  photo_count: number;
}
export interface PhotoRow {
  id: number;
  property_id: number;
  filename: string;
  content_type: string;
  size_bytes: number;
  width: number;
  height: number;
  storage_key: string;
  room: string | null;
  created_at: string;
}
export interface VideoRow {
  id: number;
  tenant_id: number;
  property_id: number;
  template: string;
  format: string;
  status: string;
  progress: number;
  error: string | null;
  callback_url: string | null;
  photo_ids: string;
  created_at: string;
  started_at: string | null;
  completed_at: string | null;
  video_asset_id: number | null;
  poster_asset_id: number | null;
  batch_id: number | null;
  options: string | null;
}
export interface BrandingRow {
  tenant_id: number;
  primary_color: string;
  secondary_color: string;
  font: string;
  logo_key: string | null;
  logo_content_type: string | null;
  logo_width: number | null;
  logo_height: number | null;
  updated_at: string;
}
export interface AudioRow {
  id: number;
  tenant_id: number;
  filename: string;
  content_type: string;
  codec: string;
  size_bytes: number;
  duration_s: number;
  storage_key: string;
  created_at: string;
}
export interface AssetRow {
  id: number;
  tenant_id: number;
  kind: string;
  video_id: number;
  property_id: number;
  content_type: string;
  size_bytes: number;
  width: number;
  height: number;
  duration_s: number | null;
  etag: string;
  storage_key: string;
  created_at: string;
}
export interface CallbackRow {
  id: number;
  tenant_id: number;
  video_id: number;
  url: string;
  event: string;
  body: string;
  attempts: number;
  next_attempt_at: number;
  status: string;
  last_error: string | null;
}

export const propertyOf = (r: PropertyRow): PropertyRecord => ({
  id: r.id as PropertyId,
  tenantId: r.tenant_id as TenantId,
  title: r.title,
  address: r.address,
  city: r.city,
  price: r.price,
  currency: r.currency,
  bedrooms: r.bedrooms,
  bathrooms: r.bathrooms,
  area: r.area,
  description: r.description,
  createdAt: r.created_at,
  photoCount: r.photo_count,
});
export const photoOf = (r: PhotoRow): PhotoRecord => ({
  id: r.id as PhotoId,
  propertyId: r.property_id as PropertyId,
  filename: r.filename,
  contentType: r.content_type as ImageType,
  sizeBytes: r.size_bytes,
  width: r.width,
  height: r.height,
  storageKey: r.storage_key,
  room: r.room as Room | null,
  createdAt: r.created_at,
});
export const videoOf = (r: VideoRow): VideoRecord => ({
  id: r.id as VideoId,
  tenantId: r.tenant_id as TenantId,
  propertyId: r.property_id as PropertyId,
  template: r.template as Template,
  format: r.format as Format,
  status: r.status as VideoStatus,
  progress: r.progress,
  error: r.error,
  callbackUrl: r.callback_url,
  photoIds: JSON.parse(r.photo_ids) as PhotoId[],
  createdAt: r.created_at,
  startedAt: r.started_at,
  completedAt: r.completed_at,
  videoAssetId: r.video_asset_id as AssetId | null,
  posterAssetId: r.poster_asset_id as AssetId | null,
  batchId: r.batch_id as VideoId | null,
  options: optionsOf(r.options),
});

/** Videos from before options existed (NULL) are plain tours; a stored object fills in any field it lacks. */
function optionsOf(raw: string | null): VideoOptions {
  const o = raw ? (JSON.parse(raw) as Partial<VideoOptions>) : {};
  return { branded: o.branded ?? true, captions: o.captions ?? false, voiceover: o.voiceover ?? false, musicId: (o.musicId ?? null) as AudioId | null };
}

export const brandingOf = (r: BrandingRow): BrandingRecord => ({
  tenantId: r.tenant_id as TenantId,
  primaryColor: r.primary_color,
  secondaryColor: r.secondary_color,
  font: r.font as BrandFont,
  logoKey: r.logo_key,
  logoContentType: r.logo_content_type,
  logoWidth: r.logo_width,
  logoHeight: r.logo_height,
  updatedAt: r.updated_at,
});
export const audioOf = (r: AudioRow): AudioRecord => ({
  id: r.id as AudioId,
  tenantId: r.tenant_id as TenantId,
  filename: r.filename,
  contentType: r.content_type,
  codec: r.codec,
  sizeBytes: r.size_bytes,
  durationS: r.duration_s,
  storageKey: r.storage_key,
  createdAt: r.created_at,
});
export const assetOf = (r: AssetRow): AssetRecord => ({
  id: r.id as AssetId,
  tenantId: r.tenant_id as TenantId,
  kind: r.kind as AssetKind,
  videoId: r.video_id as VideoId,
  propertyId: r.property_id as PropertyId,
  contentType: r.content_type,
  sizeBytes: r.size_bytes,
  width: r.width,
  height: r.height,
  durationS: r.duration_s,
  etag: r.etag,
  storageKey: r.storage_key,
  createdAt: r.created_at,
});
export const callbackOf = (r: CallbackRow): CallbackRecord => ({
  id: r.id,
  tenantId: r.tenant_id as TenantId,
  videoId: r.video_id as VideoId,
  url: r.url,
  event: r.event as CallbackEvent,
  body: r.body,
  attempts: r.attempts,
  nextAttemptAt: r.next_attempt_at,
  status: r.status as CallbackRecord['status'],
  lastError: r.last_error,
});

export function page<T extends { id: number }>(rows: T[], limit: number): Page<T> {
  const more = rows.length > limit;
  const items = more ? rows.slice(0, limit) : rows;
  return { items, nextAfter: more ? items[items.length - 1]!.id : null };
}

export const PROPERTY_COLUMNS = `p.*, (SELECT COUNT(*) FROM video_photos ph WHERE ph.property_id = p.id) AS photo_count`;

/** The settable fields of a stored branding (what a change is merged into). */
export const brandingInputOf = ({ tenantId: _t, updatedAt: _u, ...input }: BrandingRecord): BrandingInput => input;
