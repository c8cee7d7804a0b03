import type { AssetRecord, PhotoRecord, PropertyRecord, VideoRecord } from './types.js';

/** The API's JSON shapes: snake_case field names, like the spec's video input. */

export function photoView(p: PhotoRecord) {
  return {
    id: p.id,
    property_id: p.propertyId,
    filename: p.filename,
    content_type: p.contentType,
    size_bytes: p.sizeBytes,
    width: p.width,
    height: p.height,
    room: p.room,
    url: `/v1/properties/${p.propertyId}/photos/${p.id}/file`,
    created_at: p.createdAt,
  };
}

export function propertyView(p: PropertyRecord, photos: readonly PhotoRecord[]) {
  return {
    id: p.id,
    title: p.title,
    address: p.address,
    city: p.city,
    price: p.price,
    currency: p.currency,
    bedrooms: p.bedrooms,
    bathrooms: p.bathrooms,
    area: p.area,
    description: p.description,
    photo_count: p.photoCount,
    photos: photos.map(photoView),
    created_at: p.createdAt,
  };
}

export function videoView(v: VideoRecord) {
  return {
    id: v.id,
    property_id: v.propertyId,
    template: v.template,
    format: v.format,
    status: v.status,
    progress: Math.round(v.progress * 1000) / 1000,
    error: v.error,
    callback_url: v.callbackUrl,
    photo_ids: v.photoIds,
    batch_id: v.batchId,
    branded: v.options.branded,
    captions: v.options.captions,
    voiceover: v.options.voiceover,
    music_id: v.options.musicId,
    video_asset_id: v.videoAssetId,
    poster_asset_id: v.posterAssetId,
    created_at: v.createdAt,
    started_at: v.startedAt,
    completed_at: v.completedAt,
  };
}

export function assetView(a: AssetRecord) {
  return {
    id: a.id,
    kind: a.kind,
    content_type: a.contentType,
    size_bytes: a.sizeBytes,
    width: a.width,
    height: a.height,
    duration_s: a.durationS,
    video_id: a.videoId,
    property_id: a.propertyId,
    created_at: a.createdAt,
    url: `/v1/assets/${a.id}/file`,
  };
}
