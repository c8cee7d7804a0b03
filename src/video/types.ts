import type { TenantId } from '../identity/types.js';

declare const brand: unique symbol;
export type PropertyId = number & { readonly [brand]: 'PropertyId' };
export type PhotoId = number & { readonly [brand]: 'PhotoId' };
export type VideoId = number & { readonly [brand]: 'VideoId' };
export type AssetId = number & { readonly [brand]: 'AssetId' };
export type AudioId = number & { readonly [brand]: 'AudioId' };

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

export const VIDEO_STATUSES = ['queued', 'rendering', 'completed', 'failed', 'cancelled'] as const;
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
  /** The room the photo shows (a tag from ROOMS), for tours ordered by room; null when untagged. */
  room: Room | null;
  createdAt: string;
}

/** Room tags of photos, in the order a tour ordered by room shows them (untagged photos last). */
export const ROOMS = ['exterior', 'entrance', 'living', 'kitchen', 'dining', 'bedroom', 'bathroom', 'office', 'garden', 'view', 'other'] as const;
export type Room = (typeof ROOMS)[number];

/** How a tour orders its photos: as given (upload order, or the request's photo_ids), or by room tag. */
export const PHOTO_ORDERS = ['given', 'room'] as const;

/** A photo already written (under its final name) that the store should record. */
export type NewPhoto = Omit<PhotoRecord, 'id' | 'propertyId' | 'createdAt' | 'room'> & { room?: Room | null };

/** What a video shows beyond the spec's fields; the defaults are the spec's plain tour. */
export interface VideoOptions {
  /** The tenant's branding (logo, colours, font) on the title card and a corner mark; false for an unbranded cut. */
  branded: boolean;
  /** Captions from the property's fields burned in. */
  captions: boolean;
  /** A voice reading a script made of the property's fields. */
  voiceover: boolean;
  /** A music track of the tenant's (lowered under the voice); null for silence. */
  musicId: AudioId | null;
}

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
  /** The photos the video shows, in the order shown, fixed when it was requested. */
  photoIds: PhotoId[];
  /** The first video of the request that asked for several formats at once (rendered together); null for a video asked alone. */
  batchId: VideoId | null;
  options: VideoOptions;
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

export type CallbackEvent = 'video.completed' | 'video.failed' | 'video.cancelled';

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

/** The fonts a tenant's branding may name, each found on the server with fontconfig. */
export const BRAND_FONTS = ['sans', 'serif', 'mono', 'condensed'] as const;
export type BrandFont = (typeof BRAND_FONTS)[number];

/** A tenant's branding: colours as 0xRRGGBB, a font name, and a logo image (optional). */
export interface BrandingRecord {
  tenantId: TenantId;
  primaryColor: string;
  secondaryColor: string;
  font: BrandFont;
  logoKey: string | null;
  logoContentType: string | null;
  logoWidth: number | null;
  logoHeight: number | null;
  updatedAt: string;
}

export type BrandingInput = Omit<BrandingRecord, 'tenantId' | 'updatedAt'>;

/** An audio track a tenant uploaded (music for its tours), probed with ffprobe. */
export interface AudioRecord {
  id: AudioId;
  tenantId: TenantId;
  filename: string;
  contentType: string;
  codec: string;
  sizeBytes: number;
  durationS: number;
  storageKey: string;
  createdAt: string;
}

export type NewAudio = Omit<AudioRecord, 'id' | 'tenantId' | 'createdAt'>;
