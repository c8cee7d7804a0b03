import type { TenantId } from '../identity/types.js';

declare const brand: unique symbol;
export type PropertyId = number & { readonly [brand]: 'PropertyId' };
export type PhotoId = number & { readonly [brand]: 'PhotoId' };
export type VideoId = number & { readonly [brand]: 'VideoId' };
export type AssetId = number & { readonly [brand]: 'AssetId' };

export const TEMPLATES = ['tour'] as const;
export type Template = (typeof TEMPLATES)[number];

/** Output size of each aspect ratio; every one is even in both axes, as yuv420p needs. */
export const FORMATS = {
  '16:9': { width: 1920, height: 1080 },
  '9:16': { width: 1080, height: 1920 },
  '1:1': { width: 1080, height: 1080 },
  '4:5': { width: 1080, height: 1350 },
} as const;
export type Format = keyof typeof FORMATS;
export const FORMAT_NAMES = Object.keys(FORMATS) as Format[];

export const VIDEO_STATUSES = ['queued', 'rendering', 'completed', 'failed'] as const;
export type VideoStatus = (typeof VIDEO_STATUSES)[number];

export type ImageType = 'image/jpeg' | 'image/png' | 'image/webp';

export interface PropertyInput {
  title: string;
  address: string;
  city: string | null;
  price: number | null;
  currency: string | null;
  bedrooms: number | null;
  bathrooms: number | null;
  area: number | null;
  description: string | null;
}

export interface PropertyRecord extends PropertyInput {
  id: PropertyId;
  tenantId: TenantId;
  createdAt: string;
  photoCount: number;
}

export interface PhotoRecord {
  id: PhotoId;
  propertyId: PropertyId;
  filename: string;
  contentType: ImageType;
  sizeBytes: number;
  width: number;
  height: number;
  /** File name under the data directory's photos/ folder. */
  storageKey: string;
  createdAt: string;
}

/** A photo already written (under its final name) that the store should record. */
export type NewPhoto = Omit<PhotoRecord, 'id' | 'propertyId' | 'createdAt'>;

export interface VideoRecord {
  id: VideoId;
  tenantId: TenantId;
  propertyId: PropertyId;
  template: Template;
  format: Format;
  status: VideoStatus;
  progress: number;
  error: string | null;
  callbackUrl: string | null;
  /** The photos the video shows, fixed when it was requested. */
  photoIds: PhotoId[];
  createdAt: string;
  startedAt: string | null;
  completedAt: string | null;
  videoAssetId: AssetId | null;
  posterAssetId: AssetId | null;
}

export type AssetKind = 'video' | 'poster';

export interface AssetRecord {
  id: AssetId;
  tenantId: TenantId;
  kind: AssetKind;
  videoId: VideoId;
  propertyId: PropertyId;
  contentType: string;
  sizeBytes: number;
  width: number;
  height: number;
  durationS: number | null;
  etag: string;
  /** File name under the data directory's assets/ folder. */
  storageKey: string;
  createdAt: string;
}

export type NewAsset = Omit<AssetRecord, 'id' | 'tenantId' | 'videoId' | 'propertyId' | 'createdAt'>;

export type CallbackEvent = 'video.completed' | 'video.failed';

export interface CallbackRecord {
  id: number;
  tenantId: TenantId;
  videoId: VideoId;
  url: string;
  event: CallbackEvent;
  body: string;
  attempts: number;
  nextAttemptAt: number;
  status: 'pending' | 'delivered' | 'failed';
  lastError: string | null;
}

/** One page of a list, newest first; `nextCursor` is the last id of the page when more may follow. */
export interface Page<T> {
  items: T[];
  nextAfter: number | null;
}
