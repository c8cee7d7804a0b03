/**
 * The named limits of the property-video API beyond the upload limits of index.ts; each is
 * documented in docs/video.md and tested.
 */
export const VIDEO_LIMITS = {
  /** Formats one POST /v1/videos may ask for (every format once). */
  maxFormatsPerRequest: 4,
  /** Photos one video may show (the most a property may have). */
  maxPhotosPerVideo: 100,
  /** Idempotency-Key: at most this many characters of visible ASCII. */
  maxIdempotencyKeyChars: 255,
  /** How long an Idempotency-Key is remembered. */
  idempotencyTtlMs: 24 * 60 * 60 * 1000,
  /** Largest logo image. */
  maxLogoBytes: 2 * 1024 * 1024,
  /** Longest side of a logo image, in pixels. */
  maxLogoSide: 4000,
  /** Largest audio track upload. */
  maxAudioBytes: 20 * 1024 * 1024,
  /** Longest audio track, in seconds (a track shorter than the tour is looped). */
  maxAudioSeconds: 15 * 60,
  /** Shortest audio track, in seconds. */
  minAudioSeconds: 1,
  /** Audio tracks a tenant may keep. */
  maxAudioTracksPerTenant: 50,
} as const;
