import type { Db } from '../store/sqlite.js';
import { migrate } from '../store/sqlite.js';
import type { TenantId } from '../identity/types.js';
import type {
  AssetId,
  AssetKind,
  AssetRecord,
  AudioId,
  AudioRecord,
  BrandingInput,
  BrandingRecord,
  CallbackRecord,
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
  VideoId,
  VideoRecord,
} from './types.js';
import type { CallbackFor, CancelOutcome, CreateOutcome, DeleteOutcome, IdempotencyClaim, VideoFilter, VideoInput, VideoStore } from './store.js';
import {
  assetOf,
  audioOf,
  brandingInputOf,
  brandingOf,
  callbackOf,
  page,
  photoOf,
  propertyOf,
  PROPERTY_COLUMNS,
  videoOf,
  type AssetRow,
  type AudioRow,
  type BrandingRow,
  type CallbackRow,
  type PhotoRow,
  type PropertyRow,
  type VideoRow,
} from './rows.js';
import type { Lease } from '../store/lease.js';

/** The tables whose ids reach clients (or their receivers) and so must never be given twice. */
const ID_FLOOR_TABLES = ['video_properties', 'video_photos', 'video_videos', 'video_assets', 'video_callbacks'] as const;
type IdFloorTable = (typeof ID_FLOOR_TABLES)[number];
/** Where those tables' highest ids are kept: SQLite bookkeeping that PostgreSQL's identity columns do themselves. */
export const ID_FLOOR_TABLE = 'video_id_floor';

export const VIDEO_MIGRATIONS = [
  {
    version: 1,
    sql: `
      CREATE TABLE video_properties (
        id INTEGER PRIMARY KEY,
        tenant_id INTEGER NOT NULL REFERENCES tenants(id),
        title TEXT NOT NULL,
        address TEXT NOT NULL,
        city TEXT,
        price REAL NOT NULL,
        currency TEXT NOT NULL,
        bedrooms INTEGER,
        bathrooms REAL,
        area REAL,
        description TEXT,
        created_at TEXT NOT NULL
      );
      CREATE INDEX video_properties_tenant ON video_properties(tenant_id, id);
      CREATE TABLE video_photos (
        id INTEGER PRIMARY KEY,
        property_id INTEGER NOT NULL REFERENCES video_properties(id),
        filename TEXT NOT NULL,
        content_type TEXT NOT NULL,
        size_bytes INTEGER NOT NULL,
        width INTEGER NOT NULL,
        height INTEGER NOT NULL,
        storage_key TEXT NOT NULL UNIQUE,
        created_at TEXT NOT NULL
      );
      CREATE INDEX video_photos_property ON video_photos(property_id, id);
      CREATE TABLE video_videos (
        id INTEGER PRIMARY KEY,
        tenant_id INTEGER NOT NULL REFERENCES tenants(id),
        property_id INTEGER NOT NULL REFERENCES video_properties(id),
        template TEXT NOT NULL,
        format TEXT NOT NULL,
        status TEXT NOT NULL,
        progress REAL NOT NULL DEFAULT 0,
        error TEXT,
        callback_url TEXT,
        photo_ids TEXT NOT NULL,
        created_at TEXT NOT NULL,
        started_at TEXT,
        completed_at TEXT,
        video_asset_id INTEGER,
        poster_asset_id INTEGER
      );
      CREATE INDEX video_videos_queue ON video_videos(status, id);
      CREATE TABLE video_assets (
        id INTEGER PRIMARY KEY,
        tenant_id INTEGER NOT NULL REFERENCES tenants(id),
        kind TEXT NOT NULL,
        video_id INTEGER NOT NULL REFERENCES video_videos(id),
        property_id INTEGER NOT NULL REFERENCES video_properties(id),
        content_type TEXT NOT NULL,
        size_bytes INTEGER NOT NULL,
        width INTEGER NOT NULL,
        height INTEGER NOT NULL,
        duration_s REAL,
        etag TEXT NOT NULL,
        storage_key TEXT NOT NULL UNIQUE,
        created_at TEXT NOT NULL
      );
      CREATE INDEX video_assets_tenant ON video_assets(tenant_id, id);
      CREATE TABLE video_callback_secrets (
        tenant_id INTEGER PRIMARY KEY REFERENCES tenants(id),
        secret TEXT NOT NULL,
        created_at TEXT NOT NULL
      );
      CREATE TABLE video_callbacks (
        id INTEGER PRIMARY KEY,
        tenant_id INTEGER NOT NULL REFERENCES tenants(id),
        video_id INTEGER NOT NULL REFERENCES video_videos(id),
        url TEXT NOT NULL,
        event TEXT NOT NULL,
        body TEXT NOT NULL,
        attempts INTEGER NOT NULL DEFAULT 0,
        next_attempt_at INTEGER NOT NULL,
        status TEXT NOT NULL DEFAULT 'pending',
        last_error TEXT,
        created_at TEXT NOT NULL
      );
      CREATE INDEX video_callbacks_due ON video_callbacks(status, next_attempt_at);
    `,
  },
  {
    // price and currency become optional. SQLite cannot drop NOT NULL in place, so the table is
    // rebuilt (SQLite's documented procedure, foreign keys off): same ids, so photos, videos and
    // assets keep pointing at their property.
    version: 2,
    rebuildsTable: true,
    sql: `
      CREATE TABLE video_properties_v2 (
        id INTEGER PRIMARY KEY,
        tenant_id INTEGER NOT NULL REFERENCES tenants(id),
        title TEXT NOT NULL,
        address TEXT NOT NULL,
        city TEXT,
        price REAL,
        currency TEXT,
        bedrooms INTEGER,
        bathrooms REAL,
        area REAL,
        description TEXT,
        created_at TEXT NOT NULL
      );
      INSERT INTO video_properties_v2 SELECT id, tenant_id, title, address, city, price, currency, bedrooms, bathrooms, area, description, created_at FROM video_properties;
      DROP TABLE video_properties;
      ALTER TABLE video_properties_v2 RENAME TO video_properties;
      CREATE INDEX video_properties_tenant ON video_properties(tenant_id, id);
    `,
  },
  {
    // The render queue takes tenants in turn: the next queued video of the next tenant.
    version: 3,
    sql: `CREATE INDEX video_videos_fair ON video_videos(status, tenant_id, id);`,
  },
  {
    // Videos are listed per tenant and deleted with their property; assets and callbacks go with their video.
    version: 4,
    sql: `
      CREATE INDEX video_videos_tenant ON video_videos(tenant_id, id);
      CREATE INDEX video_videos_property ON video_videos(property_id, status);
      CREATE INDEX video_assets_video ON video_assets(video_id);
      CREATE INDEX video_assets_property ON video_assets(property_id);
      CREATE INDEX video_callbacks_video ON video_callbacks(video_id);
    `,
  },
  {
    // Renders and callbacks are claimed with leases (holder, expiry), so a worker that dies
    // mid-job leaves it to another once the lease runs out. Renders left from before have no
    // holder and are claimable at once.
    version: 5,
    sql: `
      ALTER TABLE video_videos ADD COLUMN lease_owner TEXT;
      ALTER TABLE video_videos ADD COLUMN lease_until INTEGER;
      UPDATE video_videos SET lease_until = 0 WHERE status = 'rendering';
      CREATE INDEX video_videos_lease ON video_videos(lease_until) WHERE status = 'rendering';
      ALTER TABLE video_callbacks ADD COLUMN lease_owner TEXT;
      ALTER TABLE video_callbacks ADD COLUMN lease_until INTEGER;
    `,
  },
  {
    // SQLite gives a new row the highest id + 1, so deleting the newest rows handed their ids
    // out again: a signed URL of a deleted asset opened the next asset made (another tenant's
    // too), and a receiver deduplicating on X-Service-Delivery dropped a new callback. Each
    // table's highest id ever given is kept here (raised by a trigger, never lowered by a
    // delete) and new rows take the next one, as PostgreSQL's identity columns do.
    version: 6,
    sql: `
      CREATE TABLE ${ID_FLOOR_TABLE} (tbl TEXT PRIMARY KEY, last_id INTEGER NOT NULL);
      ${ID_FLOOR_TABLES.map(
        (t) => `
      INSERT INTO ${ID_FLOOR_TABLE} (tbl, last_id) SELECT '${t}', COALESCE(MAX(id), 0) FROM ${t};
      CREATE TRIGGER ${t}_id_floor AFTER INSERT ON ${t} BEGIN
        UPDATE ${ID_FLOOR_TABLE} SET last_id = NEW.id WHERE tbl = '${t}' AND last_id < NEW.id;
      END;`,
      ).join('')}
    `,
  },
  {
    // Several formats per request (a batch renders together), per-video options (branding,
    // captions, voice-over, music), room tags on photos, Idempotency-Key records, the tenant's
    // branding and its audio tracks (whose ids are never given twice either, as in migration 6).
    version: 7,
    sql: `
      ALTER TABLE video_videos ADD COLUMN batch_id INTEGER;
      ALTER TABLE video_videos ADD COLUMN options TEXT;
      CREATE INDEX video_videos_batch ON video_videos(batch_id, status) WHERE batch_id IS NOT NULL;
      ALTER TABLE video_photos ADD COLUMN room TEXT;
      CREATE TABLE video_idempotency (
        tenant_id INTEGER NOT NULL REFERENCES tenants(id),
        key TEXT NOT NULL,
        request_hash TEXT NOT NULL,
        video_ids TEXT NOT NULL,
        created_at INTEGER NOT NULL,
        PRIMARY KEY (tenant_id, key)
      );
      CREATE INDEX video_idempotency_age ON video_idempotency(created_at);
      CREATE TABLE video_branding (
        tenant_id INTEGER PRIMARY KEY REFERENCES tenants(id),
        primary_color TEXT NOT NULL,
        secondary_color TEXT NOT NULL,
        font TEXT NOT NULL,
        logo_key TEXT,
        logo_content_type TEXT,
        logo_width INTEGER,
        logo_height INTEGER,
        updated_at TEXT NOT NULL
      );
      CREATE TABLE video_audio (
        id INTEGER PRIMARY KEY,
        tenant_id INTEGER NOT NULL REFERENCES tenants(id),
        filename TEXT NOT NULL,
        content_type TEXT NOT NULL,
        codec TEXT NOT NULL,
        size_bytes INTEGER NOT NULL,
        duration_s REAL NOT NULL,
        storage_key TEXT NOT NULL UNIQUE,
        created_at TEXT NOT NULL
      );
      CREATE INDEX video_audio_tenant ON video_audio(tenant_id, id);
      INSERT INTO ${ID_FLOOR_TABLE} (tbl, last_id) VALUES ('video_audio', 0);
      CREATE TRIGGER video_audio_id_floor AFTER INSERT ON video_audio BEGIN
        UPDATE ${ID_FLOOR_TABLE} SET last_id = NEW.id WHERE tbl = 'video_audio' AND last_id < NEW.id;
      END;
    `,
  },
];

/** The next id of a table whose ids are never given twice (see migration 6). */
const nextId = (table: IdFloorTable | 'video_audio'): string => `(SELECT last_id + 1 FROM ${ID_FLOOR_TABLE} WHERE tbl = '${table}')`;

/** The properties and their photos, and deleting a property with all it holds. */
function propertyStatements(db: Db) {
  return {
    insertProperty:
      db.prepare(`INSERT INTO video_properties (id, tenant_id, title, address, city, price, currency, bedrooms, bathrooms, area, description, created_at)
      VALUES (${nextId('video_properties')}, @tenantId, @title, @address, @city, @price, @currency, @bedrooms, @bathrooms, @area, @description, @createdAt) RETURNING id`),
    property: db.prepare(`SELECT ${PROPERTY_COLUMNS} FROM video_properties p WHERE p.tenant_id = ? AND p.id = ?`),
    properties: db.prepare(`SELECT ${PROPERTY_COLUMNS} FROM video_properties p WHERE p.tenant_id = ? AND p.id < ? ORDER BY p.id DESC LIMIT ?`),
    photoCount: db.prepare('SELECT COUNT(*) AS n FROM video_photos WHERE property_id = ?'),
    insertPhoto: db.prepare(`INSERT INTO video_photos (id, property_id, filename, content_type, size_bytes, width, height, storage_key, created_at, room)
      VALUES (${nextId('video_photos')}, ?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING *`),
    photo: db.prepare('SELECT * FROM video_photos WHERE id = ?'),
    photosOf: db.prepare('SELECT * FROM video_photos WHERE property_id IN (SELECT value FROM json_each(?)) ORDER BY id'),
    setRoom: db.prepare(`UPDATE video_photos SET room = ? WHERE id = ? AND property_id = ?
      AND property_id IN (SELECT id FROM video_properties WHERE tenant_id = ?) RETURNING *`),
    photoOfTenant: db.prepare(`SELECT ph.storage_key FROM video_photos ph JOIN video_properties p ON p.id = ph.property_id
      WHERE p.tenant_id = ? AND ph.property_id = ? AND ph.id = ?`),
    videoShowingPhoto: db.prepare(`SELECT v.id, v.status FROM video_videos v, json_each(v.photo_ids) j
      WHERE v.tenant_id = ? AND v.status IN ('queued', 'rendering') AND j.value = ? ORDER BY v.id LIMIT 1`),
    deletePhoto: db.prepare('DELETE FROM video_photos WHERE id = ?'),
    renderingOfProperty: db.prepare(`SELECT id, status FROM video_videos WHERE property_id = ? AND status = 'rendering' ORDER BY id LIMIT 1`),
    assetKeysOfProperty: db.prepare('SELECT storage_key FROM video_assets WHERE property_id = ? ORDER BY id'),
    photoKeysOfProperty: db.prepare('SELECT storage_key FROM video_photos WHERE property_id = ? ORDER BY id'),
    deleteCallbacksOfProperty: db.prepare('DELETE FROM video_callbacks WHERE video_id IN (SELECT id FROM video_videos WHERE property_id = ?)'),
    deleteAssetsOfProperty: db.prepare('DELETE FROM video_assets WHERE property_id = ?'),
    deleteVideosOfProperty: db.prepare('DELETE FROM video_videos WHERE property_id = ?'),
    deletePhotosOfProperty: db.prepare('DELETE FROM video_photos WHERE property_id = ?'),
    deleteProperty: db.prepare('DELETE FROM video_properties WHERE id = ?'),
  };
}

/** Videos as the API creates, reads, cancels and deletes them, with the idempotency keys of their creation. */
function videoStatements(db: Db) {
  return {
    insertVideo:
      db.prepare(`INSERT INTO video_videos (id, tenant_id, property_id, template, format, status, progress, callback_url, photo_ids, created_at, options)
      VALUES (${nextId('video_videos')}, ?, ?, ?, ?, 'queued', 0, ?, ?, ?, ?) RETURNING *`),
    setBatch: db.prepare('UPDATE video_videos SET batch_id = ? WHERE id = ? RETURNING *'),
    idempotency: db.prepare('SELECT request_hash, video_ids FROM video_idempotency WHERE tenant_id = ? AND key = ? AND created_at > ?'),
    purgeIdempotency: db.prepare('DELETE FROM video_idempotency WHERE tenant_id = ? AND (created_at <= ? OR key = ?)'),
    insertIdempotency: db.prepare('INSERT INTO video_idempotency (tenant_id, key, request_hash, video_ids, created_at) VALUES (?, ?, ?, ?, ?)'),
    cancel: db.prepare(`UPDATE video_videos SET status = 'cancelled', completed_at = ?, lease_owner = NULL, lease_until = NULL
      WHERE id = ? AND status IN ('queued', 'rendering') RETURNING *`),
    video: db.prepare('SELECT * FROM video_videos WHERE tenant_id = ? AND id = ?'),
    videoById: db.prepare('SELECT * FROM video_videos WHERE id = ?'),
    unfinished: db.prepare(`SELECT COUNT(*) AS n FROM video_videos WHERE status IN ('queued', 'rendering') AND tenant_id = ?`),
    assetKeysOfVideo: db.prepare('SELECT storage_key FROM video_assets WHERE video_id = ? ORDER BY id'),
    deleteCallbacksOfVideo: db.prepare('DELETE FROM video_callbacks WHERE video_id = ?'),
    deleteAssetsOfVideo: db.prepare('DELETE FROM video_assets WHERE video_id = ?'),
    deleteVideo: db.prepare('DELETE FROM video_videos WHERE id = ?'),
  };
}

/** The render queue: claims and leases, progress, the finished assets, completion and failure. */
function renderStatements(db: Db) {
  return {
    claimBatch: db.prepare(`UPDATE video_videos SET status = 'rendering', progress = 0, started_at = ?, lease_owner = ?, lease_until = ?
      WHERE batch_id = ? AND status = 'queued' RETURNING *`),
    requeue: db.prepare(
      `UPDATE video_videos SET status = 'queued', progress = 0, started_at = NULL, lease_owner = NULL, lease_until = NULL WHERE status = 'rendering'`,
    ),
    release: db.prepare(
      `UPDATE video_videos SET status = 'queued', progress = 0, started_at = NULL, lease_owner = NULL, lease_until = NULL WHERE status = 'rendering' AND lease_owner = ?`,
    ),
    lapsed: db.prepare(
      `SELECT id FROM video_videos INDEXED BY video_videos_lease WHERE status = 'rendering' AND lease_until <= ? ORDER BY lease_until, id LIMIT 1`,
    ),
    nextQueued: db.prepare(`SELECT id FROM video_videos WHERE status = 'queued' AND tenant_id > ? ORDER BY tenant_id, id LIMIT 1`),
    claim: db.prepare(
      `UPDATE video_videos SET status = 'rendering', progress = 0, started_at = ?, lease_owner = ?, lease_until = ?
       WHERE id = ? AND (status = 'queued' OR (status = 'rendering' AND lease_until <= ?)) RETURNING *`,
    ),
    renew: db.prepare(`UPDATE video_videos SET lease_until = ? WHERE id = ? AND status = 'rendering' AND lease_owner = ?`),
    holds: db.prepare(`SELECT 1 FROM video_videos WHERE id = ? AND status = 'rendering' AND lease_owner = ?`),
    progress: db.prepare(`UPDATE video_videos SET progress = ? WHERE id = ? AND status = 'rendering'`),
    insertAsset:
      db.prepare(`INSERT INTO video_assets (id, tenant_id, kind, video_id, property_id, content_type, size_bytes, width, height, duration_s, etag, storage_key, created_at)
      VALUES (${nextId('video_assets')}, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING id`),
    complete: db.prepare(`UPDATE video_videos SET status = 'completed', progress = 1, completed_at = ?, video_asset_id = ?, poster_asset_id = ?, error = NULL,
      lease_owner = NULL, lease_until = NULL WHERE id = ? RETURNING *`),
    fail: db.prepare(`UPDATE video_videos SET status = 'failed', error = ?, completed_at = ?, lease_owner = NULL, lease_until = NULL WHERE id = ? RETURNING *`),
    asset: db.prepare('SELECT * FROM video_assets WHERE tenant_id = ? AND id = ?'),
    assetById: db.prepare('SELECT * FROM video_assets WHERE id = ?'),
  };
}

/** A tenant's branding and its uploaded music. */
function brandingAudioStatements(db: Db) {
  return {
    branding: db.prepare('SELECT * FROM video_branding WHERE tenant_id = ?'),
    upsertBranding:
      db.prepare(`INSERT INTO video_branding (tenant_id, primary_color, secondary_color, font, logo_key, logo_content_type, logo_width, logo_height, updated_at)
      VALUES (@tenantId, @primaryColor, @secondaryColor, @font, @logoKey, @logoContentType, @logoWidth, @logoHeight, @updatedAt)
      ON CONFLICT(tenant_id) DO UPDATE SET primary_color = excluded.primary_color, secondary_color = excluded.secondary_color, font = excluded.font,
        logo_key = excluded.logo_key, logo_content_type = excluded.logo_content_type, logo_width = excluded.logo_width, logo_height = excluded.logo_height,
        updated_at = excluded.updated_at RETURNING *`),
    audioCount: db.prepare('SELECT COUNT(*) AS n FROM video_audio WHERE tenant_id = ?'),
    insertAudio: db.prepare(`INSERT INTO video_audio (id, tenant_id, filename, content_type, codec, size_bytes, duration_s, storage_key, created_at)
      VALUES (${nextId('video_audio')}, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING *`),
    audio: db.prepare('SELECT * FROM video_audio WHERE tenant_id = ? AND id = ?'),
    audios: db.prepare('SELECT * FROM video_audio WHERE tenant_id = ? AND id < ? ORDER BY id DESC LIMIT ?'),
    videoUsingAudio: db.prepare(`SELECT id, status FROM video_videos WHERE tenant_id = ? AND status IN ('queued', 'rendering')
      AND json_extract(options, '$.musicId') = ? ORDER BY id LIMIT 1`),
    deleteAudio: db.prepare('DELETE FROM video_audio WHERE id = ?'),
  };
}

/** The callback secret and the durable callbacks: queued, leased, attempted. */
function callbackStatements(db: Db) {
  return {
    secret: db.prepare('SELECT secret FROM video_callback_secrets WHERE tenant_id = ?'),
    insertSecret: db.prepare('INSERT INTO video_callback_secrets (tenant_id, secret, created_at) VALUES (?, ?, ?) ON CONFLICT(tenant_id) DO NOTHING'),
    upsertSecret: db.prepare(
      'INSERT INTO video_callback_secrets (tenant_id, secret, created_at) VALUES (?, ?, ?) ON CONFLICT(tenant_id) DO UPDATE SET secret = excluded.secret, created_at = excluded.created_at',
    ),
    insertCallback: db.prepare(
      `INSERT INTO video_callbacks (id, tenant_id, video_id, url, event, body, next_attempt_at, created_at) VALUES (${nextId('video_callbacks')}, ?, ?, ?, ?, ?, ?, ?)`,
    ),
    dueCallbacks: db.prepare(
      `SELECT id FROM video_callbacks WHERE status = 'pending' AND next_attempt_at <= ? AND (lease_until IS NULL OR lease_until <= ?) ORDER BY next_attempt_at, id LIMIT ?`,
    ),
    leaseCallback: db.prepare(`UPDATE video_callbacks SET lease_owner = ?, lease_until = ? WHERE id = ? RETURNING *`),
    recordAttempt: db.prepare(
      `UPDATE video_callbacks SET attempts = attempts + 1, status = ?, next_attempt_at = ?, last_error = ?, lease_owner = NULL, lease_until = NULL
       WHERE id = ? AND status = 'pending' AND lease_owner = ?`,
    ),
    callbacksOf: db.prepare('SELECT * FROM video_callbacks WHERE video_id = ? ORDER BY id'),
  };
}

export class SqliteVideoStore implements VideoStore {
  readonly exclusive = true;
  private readonly q;

  constructor(
    private readonly db: Db,
    private readonly now: () => number = Date.now,
  ) {
    migrate(db, 'video', VIDEO_MIGRATIONS);
    this.q = {
      ...propertyStatements(db),
      ...videoStatements(db),
      ...renderStatements(db),
      ...brandingAudioStatements(db),
      ...callbackStatements(db),
    };
  }

  private iso(): string {
    return new Date(this.now()).toISOString();
  }

  async createProperty(tenantId: TenantId, input: PropertyInput): Promise<PropertyRecord> {
    const createdAt = this.iso();
    const { id } = this.q.insertProperty.get({ ...input, tenantId, createdAt }) as { id: number };
    return { ...input, id: id as PropertyId, tenantId, createdAt, photoCount: 0 };
  }

  async getProperty(tenantId: TenantId, id: PropertyId): Promise<PropertyRecord | null> {
    const row = this.q.property.get(tenantId, id) as PropertyRow | undefined;
    return row ? propertyOf(row) : null;
  }

  async propertyTenant(id: PropertyId): Promise<TenantId | null> {
    const row = this.db.prepare('SELECT tenant_id FROM video_properties WHERE id = ?').get(id) as { tenant_id: number } | undefined;
    return row ? (row.tenant_id as TenantId) : null;
  }

  async listProperties(tenantId: TenantId, limit: number, before: number | null): Promise<Page<PropertyRecord>> {
    const rows = this.q.properties.all(tenantId, before ?? Number.MAX_SAFE_INTEGER, limit + 1) as PropertyRow[];
    const p = page(rows, limit);
    return { items: p.items.map(propertyOf), nextAfter: p.nextAfter };
  }

  async photosOf(propertyIds: readonly PropertyId[]): Promise<Map<PropertyId, PhotoRecord[]>> {
    const out = new Map<PropertyId, PhotoRecord[]>(propertyIds.map((id) => [id, []]));
    if (propertyIds.length === 0) return out;
    // One prepared statement for any number of ids (a list page asks for up to 100).
    const rows = this.q.photosOf.all(JSON.stringify(propertyIds)) as PhotoRow[];
    for (const r of rows) out.get(r.property_id as PropertyId)!.push(photoOf(r));
    return out;
  }

  async addPhotos(propertyId: PropertyId, photos: readonly NewPhoto[], maxPerProperty: number): Promise<PhotoRecord[] | 'too_many'> {
    return this.db.transaction((): PhotoRecord[] | 'too_many' => {
      const { n } = this.q.photoCount.get(propertyId) as { n: number };
      if (n + photos.length > maxPerProperty) return 'too_many';
      const at = this.iso();
      return photos.map((p) =>
        photoOf(this.q.insertPhoto.get(propertyId, p.filename, p.contentType, p.sizeBytes, p.width, p.height, p.storageKey, at, p.room ?? null) as PhotoRow),
      );
    })();
  }

  async photosByIds(ids: readonly PhotoId[]): Promise<PhotoRecord[]> {
    return ids
      .map((id) => this.q.photo.get(id) as PhotoRow | undefined)
      .filter((r): r is PhotoRow => r !== undefined)
      .map(photoOf);
  }

  createVideo(tenantId: TenantId, input: VideoInput): Promise<VideoRecord>;
  createVideo(tenantId: TenantId, input: VideoInput, maxUnfinished: number): Promise<VideoRecord | 'limit'>;
  async createVideo(tenantId: TenantId, input: VideoInput, maxUnfinished = Infinity): Promise<VideoRecord | 'limit'> {
    const out = await this.createVideos(tenantId, [input], maxUnfinished, null);
    return out.kind === 'created' ? out.videos[0]! : 'limit';
  }

  async createVideos(tenantId: TenantId, inputs: readonly VideoInput[], maxUnfinished: number, idem: IdempotencyClaim | null): Promise<CreateOutcome> {
    return this.db
      .transaction((): CreateOutcome => {
        const now = this.now();
        if (idem) {
          const seen = this.q.idempotency.get(tenantId, idem.key, now - idem.ttlMs) as { request_hash: string; video_ids: string } | undefined;
          if (seen) {
            if (seen.request_hash !== idem.hash) return { kind: 'key_reused' };
            const ids = JSON.parse(seen.video_ids) as number[];
            // A video deleted since is left out; the rest answer as they are now.
            return {
              kind: 'replayed',
              videos: ids
                .map((id) => this.q.videoById.get(id) as VideoRow | undefined)
                .filter((r) => r !== undefined)
                .map(videoOf),
            };
          }
        }
        if ((this.q.unfinished.get(tenantId) as { n: number }).n + inputs.length > maxUnfinished) return { kind: 'limit' };
        const at = this.iso();
        let videos = inputs.map((input) =>
          videoOf(
            this.q.insertVideo.get(
              tenantId,
              input.propertyId,
              input.template,
              input.format,
              input.callbackUrl,
              JSON.stringify(input.photoIds),
              at,
              input.options ? JSON.stringify(input.options) : null,
            ) as VideoRow,
          ),
        );
        if (videos.length > 1) videos = videos.map((v) => videoOf(this.q.setBatch.get(videos[0]!.id, v.id) as VideoRow));
        if (idem) {
          this.q.purgeIdempotency.run(tenantId, now - idem.ttlMs, idem.key);
          this.q.insertIdempotency.run(tenantId, idem.key, idem.hash, JSON.stringify(videos.map((v) => v.id)), now);
        }
        return { kind: 'created', videos };
      })
      .immediate();
  }

  async claimBatch(lease: Lease, batchId: VideoId): Promise<VideoRecord[]> {
    const at = this.now();
    return (this.q.claimBatch.all(this.iso(), lease.owner, at + lease.ms, batchId) as VideoRow[]).map(videoOf);
  }

  async cancelVideo(tenantId: TenantId, id: VideoId, callback: CallbackFor): Promise<CancelOutcome> {
    return this.db
      .transaction((): CancelOutcome => {
        const row = this.q.video.get(tenantId, id) as VideoRow | undefined;
        if (!row) return { kind: 'not_found' };
        const done = this.q.cancel.get(this.iso(), id) as VideoRow | undefined;
        if (!done) return { kind: 'finished', video: videoOf(row) };
        const video = videoOf(done);
        this.enqueueCallback(video, callback);
        return { kind: 'cancelled', video };
      })
      .immediate();
  }

  async setPhotoRoom(tenantId: TenantId, propertyId: PropertyId, photoId: PhotoId, room: Room | null): Promise<PhotoRecord | null> {
    const row = this.q.setRoom.get(room, photoId, propertyId, tenantId) as PhotoRow | undefined;
    return row ? photoOf(row) : null;
  }

  async getBranding(tenantId: TenantId): Promise<BrandingRecord | null> {
    const row = this.q.branding.get(tenantId) as BrandingRow | undefined;
    return row ? brandingOf(row) : null;
  }

  async putBranding(
    tenantId: TenantId,
    change: Partial<BrandingInput>,
    defaults: BrandingInput,
  ): Promise<{ branding: BrandingRecord; replacedLogoKey: string | null }> {
    return this.db
      .transaction(() => {
        const before = this.q.branding.get(tenantId) as BrandingRow | undefined;
        const input = { ...(before ? brandingInputOf(brandingOf(before)) : defaults), ...change };
        const row = this.q.upsertBranding.get({ ...input, tenantId, updatedAt: this.iso() }) as BrandingRow;
        const replaced = before?.logo_key && before.logo_key !== row.logo_key ? before.logo_key : null;
        return { branding: brandingOf(row), replacedLogoKey: replaced };
      })
      .immediate();
  }

  async addAudio(tenantId: TenantId, a: NewAudio, maxPerTenant: number): Promise<AudioRecord | 'too_many'> {
    return this.db
      .transaction((): AudioRecord | 'too_many' => {
        if ((this.q.audioCount.get(tenantId) as { n: number }).n >= maxPerTenant) return 'too_many';
        return audioOf(this.q.insertAudio.get(tenantId, a.filename, a.contentType, a.codec, a.sizeBytes, a.durationS, a.storageKey, this.iso()) as AudioRow);
      })
      .immediate();
  }

  async getAudio(tenantId: TenantId, id: AudioId): Promise<AudioRecord | null> {
    const row = this.q.audio.get(tenantId, id) as AudioRow | undefined;
    return row ? audioOf(row) : null;
  }

  async listAudio(tenantId: TenantId, limit: number, before: number | null): Promise<Page<AudioRecord>> {
    const p = page(this.q.audios.all(tenantId, before ?? Number.MAX_SAFE_INTEGER, limit + 1) as AudioRow[], limit);
    return { items: p.items.map(audioOf), nextAfter: p.nextAfter };
  }

  async deleteAudio(tenantId: TenantId, id: AudioId): Promise<DeleteOutcome> {
    return this.db
      .transaction((): DeleteOutcome => {
        const row = this.q.audio.get(tenantId, id) as AudioRow | undefined;
        if (!row) return { kind: 'not_found' };
        const user = this.q.videoUsingAudio.get(tenantId, id) as { id: number; status: 'queued' | 'rendering' } | undefined;
        if (user) return { kind: 'busy', videoId: user.id as VideoId, status: user.status };
        this.q.deleteAudio.run(id);
        return { kind: 'deleted', orphans: { photoKeys: [], assetKeys: [], mediaKeys: [row.storage_key] } };
      })
      .immediate();
  }

  async getVideo(tenantId: TenantId, id: VideoId): Promise<VideoRecord | null> {
    const row = this.q.video.get(tenantId, id) as VideoRow | undefined;
    return row ? videoOf(row) : null;
  }

  async listVideos(tenantId: TenantId, filter: VideoFilter, limit: number, before: number | null): Promise<Page<VideoRecord>> {
    const where = ['tenant_id = ?', 'id < ?'];
    const args: (number | string)[] = [tenantId, before ?? Number.MAX_SAFE_INTEGER];
    if (filter.propertyId !== undefined) (where.push('property_id = ?'), args.push(filter.propertyId));
    if (filter.status !== undefined) (where.push('status = ?'), args.push(filter.status));
    const rows = this.db.prepare(`SELECT * FROM video_videos WHERE ${where.join(' AND ')} ORDER BY id DESC LIMIT ?`).all(...args, limit + 1) as VideoRow[];
    const p = page(rows, limit);
    return { items: p.items.map(videoOf), nextAfter: p.nextAfter };
  }

  async videoById(id: VideoId): Promise<VideoRecord | null> {
    const row = this.q.videoById.get(id) as VideoRow | undefined;
    return row ? videoOf(row) : null;
  }

  async requeueInterrupted(): Promise<number> {
    return this.q.requeue.run().changes;
  }

  async claimNextQueued(lease: Lease, afterTenant: TenantId | null): Promise<VideoRecord | null> {
    return this.db.transaction((): VideoRecord | null => {
      const at = this.now();
      // A render whose holder died goes first: it has waited longest. Otherwise tenants take turns.
      const next = (this.q.lapsed.get(at) ?? (afterTenant !== null ? this.q.nextQueued.get(afterTenant) : undefined) ?? this.q.nextQueued.get(0)) as
        | { id: number }
        | undefined;
      if (!next) return null;
      const row = this.q.claim.get(this.iso(), lease.owner, at + lease.ms, next.id, at) as VideoRow | undefined;
      return row ? videoOf(row) : null;
    })();
  }

  async renewRender(lease: Lease, id: VideoId): Promise<boolean> {
    return this.q.renew.run(this.now() + lease.ms, id, lease.owner).changes > 0;
  }

  async releaseRenders(owner: string): Promise<number> {
    return this.q.release.run(owner).changes;
  }

  async setProgress(id: VideoId, progress: number): Promise<void> {
    this.q.progress.run(progress, id);
  }

  private enqueueCallback(video: VideoRecord, callback: CallbackFor): void {
    const cb = callback(video);
    if (cb) this.q.insertCallback.run(video.tenantId, video.id, cb.url, cb.event, cb.body, this.now(), this.iso());
  }

  async completeVideo(owner: string, id: VideoId, assets: { video: NewAsset; poster: NewAsset }, callback: CallbackFor): Promise<VideoRecord | null> {
    return this.db.transaction((): VideoRecord | null => {
      if (!this.q.holds.get(id, owner)) return null;
      const v = videoOf(this.q.videoById.get(id) as VideoRow);
      const at = this.iso();
      const insert = (a: NewAsset, kind: AssetKind): number =>
        (
          this.q.insertAsset.get(
            v.tenantId,
            kind,
            v.id,
            v.propertyId,
            a.contentType,
            a.sizeBytes,
            a.width,
            a.height,
            a.durationS,
            a.etag,
            a.storageKey,
            at,
          ) as { id: number }
        ).id;
      const videoAsset = insert(assets.video, 'video');
      const posterAsset = insert(assets.poster, 'poster');
      const done = videoOf(this.q.complete.get(at, videoAsset, posterAsset, id) as VideoRow);
      this.enqueueCallback(done, callback);
      return done;
    })();
  }

  async failVideo(owner: string, id: VideoId, error: string, callback: CallbackFor): Promise<VideoRecord | null> {
    return this.db.transaction((): VideoRecord | null => {
      if (!this.q.holds.get(id, owner)) return null;
      const done = videoOf(this.q.fail.get(error, this.iso(), id) as VideoRow);
      this.enqueueCallback(done, callback);
      return done;
    })();
  }

  async listAssets(
    tenantId: TenantId,
    filter: { propertyId?: PropertyId; videoId?: VideoId },
    limit: number,
    before: number | null,
  ): Promise<Page<AssetRecord>> {
    const where = ['tenant_id = ?', 'id < ?'];
    const args: number[] = [tenantId, before ?? Number.MAX_SAFE_INTEGER];
    if (filter.propertyId !== undefined) (where.push('property_id = ?'), args.push(filter.propertyId));
    if (filter.videoId !== undefined) (where.push('video_id = ?'), args.push(filter.videoId));
    const rows = this.db.prepare(`SELECT * FROM video_assets WHERE ${where.join(' AND ')} ORDER BY id DESC LIMIT ?`).all(...args, limit + 1) as AssetRow[];
    const p = page(rows, limit);
    return { items: p.items.map(assetOf), nextAfter: p.nextAfter };
  }

  async getAsset(tenantId: TenantId, id: AssetId): Promise<AssetRecord | null> {
    const row = this.q.asset.get(tenantId, id) as AssetRow | undefined;
    return row ? assetOf(row) : null;
  }

  async assetById(id: AssetId): Promise<AssetRecord | null> {
    const row = this.q.assetById.get(id) as AssetRow | undefined;
    return row ? assetOf(row) : null;
  }

  private keys(statement: { all(...args: number[]): unknown[] }, id: number): string[] {
    return (statement.all(id) as { storage_key: string }[]).map((r) => r.storage_key);
  }

  async deleteVideo(tenantId: TenantId, id: VideoId): Promise<DeleteOutcome> {
    return this.db
      .transaction((): DeleteOutcome => {
        const row = this.q.video.get(tenantId, id) as VideoRow | undefined;
        if (!row) return { kind: 'not_found' };
        if (row.status === 'rendering') return { kind: 'busy', videoId: id, status: 'rendering' };
        const assetKeys = this.keys(this.q.assetKeysOfVideo, id);
        this.q.deleteCallbacksOfVideo.run(id);
        this.q.deleteAssetsOfVideo.run(id);
        this.q.deleteVideo.run(id);
        return { kind: 'deleted', orphans: { photoKeys: [], assetKeys } };
      })
      .immediate();
  }

  async deletePhoto(tenantId: TenantId, propertyId: PropertyId, photoId: PhotoId): Promise<DeleteOutcome> {
    return this.db
      .transaction((): DeleteOutcome => {
        const row = this.q.photoOfTenant.get(tenantId, propertyId, photoId) as { storage_key: string } | undefined;
        if (!row) return { kind: 'not_found' };
        const user = this.q.videoShowingPhoto.get(tenantId, photoId) as { id: number; status: 'queued' | 'rendering' } | undefined;
        if (user) return { kind: 'busy', videoId: user.id as VideoId, status: user.status };
        this.q.deletePhoto.run(photoId);
        return { kind: 'deleted', orphans: { photoKeys: [row.storage_key], assetKeys: [] } };
      })
      .immediate();
  }

  async deleteProperty(tenantId: TenantId, id: PropertyId): Promise<DeleteOutcome> {
    return this.db
      .transaction((): DeleteOutcome => {
        if (!this.q.property.get(tenantId, id)) return { kind: 'not_found' };
        const rendering = this.q.renderingOfProperty.get(id) as { id: number } | undefined;
        if (rendering) return { kind: 'busy', videoId: rendering.id as VideoId, status: 'rendering' };
        const orphans = { photoKeys: this.keys(this.q.photoKeysOfProperty, id), assetKeys: this.keys(this.q.assetKeysOfProperty, id) };
        this.q.deleteCallbacksOfProperty.run(id);
        this.q.deleteAssetsOfProperty.run(id);
        this.q.deleteVideosOfProperty.run(id);
        this.q.deletePhotosOfProperty.run(id);
        this.q.deleteProperty.run(id);
        return { kind: 'deleted', orphans };
      })
      .immediate();
  }

  async callbackSecret(tenantId: TenantId, fresh: () => string): Promise<string> {
    return this.db.transaction((): string => {
      this.q.insertSecret.run(tenantId, fresh(), this.iso());
      return (this.q.secret.get(tenantId) as { secret: string }).secret;
    })();
  }

  async rotateCallbackSecret(tenantId: TenantId, secret: string): Promise<void> {
    this.q.upsertSecret.run(tenantId, secret, this.iso());
  }

  async claimCallbacks(lease: Lease, now: number, limit: number): Promise<CallbackRecord[]> {
    return this.db.transaction((): CallbackRecord[] => {
      const ids = this.q.dueCallbacks.all(now, now, limit) as { id: number }[];
      return ids.map((r) => callbackOf(this.q.leaseCallback.get(lease.owner, now + lease.ms, r.id) as CallbackRow));
    })();
  }

  async recordCallbackAttempt(
    owner: string,
    id: number,
    outcome: { status: CallbackRecord['status']; nextAttemptAt: number; error: string | null },
  ): Promise<boolean> {
    return this.q.recordAttempt.run(outcome.status, outcome.nextAttemptAt, outcome.error, id, owner).changes > 0;
  }

  async callbacksOf(videoId: VideoId): Promise<CallbackRecord[]> {
    return (this.q.callbacksOf.all(videoId) as CallbackRow[]).map(callbackOf);
  }
}
