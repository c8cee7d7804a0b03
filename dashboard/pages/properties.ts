import { useEffect, useRef, useState } from 'preact/hooks';
import { html } from '../html.js';
import { ApiError, byPath, call, messageOf, upload } from '../api.js';
import { ErrorBox, Field, NumberField, TextField, fmtTime, useInterval, useLoad } from '../ui.js';
import { FORMATS, ROOMS } from '../server-mirror.js';

interface Photo {
  id: number;
  filename: string;
  width: number;
  height: number;
  size_bytes: number;
  room: string | null;
}

interface Property {
  id: number;
  title: string;
  address: string;
  city: string | null;
  price: number | null;
  currency: string | null;
  bedrooms: number | null;
  photo_count: number;
  photos: Photo[];
  created_at: string;
}

interface Video {
  id: number;
  format: string;
  status: 'queued' | 'rendering' | 'completed' | 'failed' | 'cancelled';
  progress: number;
  batch_id: number | null;
  error: string | null;
  video_asset_id: number | null;
  poster_asset_id: number | null;
  created_at: string;
}

interface PropertyForm {
  title: string;
  address: string;
  city: string;
  price: number;
  currency: string;
  bedrooms: number;
}

/** What the form refuses before asking the server. */
function propertyProblems(form: PropertyForm): Record<string, string> {
  const local: Record<string, string> = {};
  if (!form.title.trim()) local.title = 'Enter a title.';
  if (!form.address.trim()) local.address = 'Enter an address.';
  if (!Number.isFinite(form.price) || form.price < 0) local.price = 'Enter a price of 0 or more.';
  if (!/^[A-Z]{3}$/.test(form.currency)) local.currency = 'Three upper-case letters (ISO 4217), e.g. EUR.';
  if (Number.isFinite(form.bedrooms) && (!Number.isInteger(form.bedrooms) || form.bedrooms < 0)) local.bedrooms = 'A whole number of 0 or more.';
  return local;
}

function propertyTable(properties: Property[]) {
  return html`<div class="table-wrap">
    <table>
      <caption class="sr-only">
        Properties
      </caption>
      <thead>
        <tr>
          <th scope="col">Title</th>
          <th scope="col">Address</th>
          <th scope="col">Price</th>
          <th scope="col">Photos</th>
          <th scope="col">Created</th>
        </tr>
      </thead>
      <tbody>
        ${properties.map(
          (p) =>
            html`<tr>
              <th scope="row"><a href=${`#/properties/${p.id}`}>${p.title}</a></th>
              <td>${p.address}${p.city ? `, ${p.city}` : ''}</td>
              <td>${priceText(p)}</td>
              <td>${p.photo_count}</td>
              <td>${fmtTime(p.created_at)}</td>
            </tr>`,
        )}
      </tbody>
    </table>
  </div>`;
}

export function PropertiesPage() {
  const list = useLoad(() => call<{ data: Property[] }>('GET', '/v1/properties?limit=100'), []);
  const [form, setForm] = useState<PropertyForm>({ title: '', address: '', city: '', price: NaN, currency: 'EUR', bedrooms: NaN });
  const [fields, setFields] = useState<Record<string, string>>({});
  const [error, setError] = useState<string | null>(null);
  const set = (k: keyof typeof form) => (v: string | number) => setForm({ ...form, [k]: v });

  const create = async (e: Event) => {
    e.preventDefault();
    setError(null);
    const local = propertyProblems(form);
    setFields(local);
    if (Object.keys(local).length) return;
    const body: Record<string, unknown> = { title: form.title, address: form.address, price: form.price, currency: form.currency };
    if (form.city) body.city = form.city;
    if (Number.isFinite(form.bedrooms)) body.bedrooms = form.bedrooms;
    try {
      const p = await call<Property>('POST', '/v1/properties', { body });
      location.hash = `#/properties/${p.id}`;
    } catch (err) {
      if (err instanceof ApiError) setFields(byPath(err.details));
      setError(messageOf(err));
    }
  };

  return html`<section>
    <h1>Properties and videos</h1>
    <p class="hint">The property-video API, with your session (agency plan and up). Integrations use API keys (Keys page).</p>
    <form class="card" onSubmit=${create} novalidate aria-labelledby="new-property-title">
      <h2 id="new-property-title" class="h3">New property</h2>
      <${ErrorBox} error=${error} />
      <div class="row">
        <${TextField} id="prop-title" label="Title" value=${form.title} onValue=${set('title')} maxLength=${200} error=${fields.title} />
        <${TextField} id="prop-address" label="Address" value=${form.address} onValue=${set('address')} maxLength=${500} error=${fields.address} />
        <${TextField} id="prop-city" label="City (optional)" value=${form.city} onValue=${set('city')} maxLength=${200} error=${fields.city} />
      </div>
      <div class="row">
        <${NumberField} id="prop-price" label="Price" value=${form.price} onValue=${set('price')} min=${0} step="any" error=${fields.price} />
        <${TextField}
          id="prop-currency"
          label="Currency"
          value=${form.currency}
          onValue=${(v: string) => set('currency')(v.toUpperCase())}
          maxLength=${3}
          error=${fields.currency}
        />
        <${NumberField} id="prop-bedrooms" label="Bedrooms (optional)" value=${form.bedrooms} onValue=${set('bedrooms')} min=${0} error=${fields.bedrooms} />
      </div>
      <button type="submit">Create property</button>
    </form>
    <${ErrorBox} error=${list.error} />
    ${list.data?.data.length === 0 ? html`<p class="empty">No properties yet.</p>` : null}
    ${list.data && list.data.data.length > 0 ? propertyTable(list.data.data) : null}
  </section>`;
}

export function PropertyPage({ id }: { id: string }) {
  const property = useLoad(() => call<Property>('GET', `/v1/properties/${encodeURIComponent(id)}`), [id]);
  const videos = useLoad(() => call<{ data: Video[] }>('GET', `/v1/videos?property_id=${encodeURIComponent(id)}&limit=100`), [id]);
  const [error, setError] = useState<string | null>(null);
  const p = property.data;
  const remove = async () => {
    if (!p || !confirm(`Delete "${p.title}" with its photos, videos and their files? This cannot be undone.`)) return;
    setError(null);
    try {
      await call('DELETE', `/v1/properties/${p.id}`);
      location.hash = '#/properties';
    } catch (err) {
      setError(messageOf(err));
    }
  };
  return html`<section>
    <p class="crumbs"><a href="#/properties">Properties</a> ›</p>
    <h1>${p?.title ?? `Property ${id}`}</h1>
    <${ErrorBox} error=${property.error} />
    ${p ? html`<p>${p.address}${p.city ? `, ${p.city}` : ''} · ${priceText(p)}${p.bedrooms !== null ? ` · ${p.bedrooms} bedrooms` : ''}</p>` : null}
    <${Photos} id=${id} photos=${p?.photos ?? []} onChanged=${() => property.reload()} />
    <${RequestVideo} id=${id} hasPhotos=${(p?.photo_count ?? 0) > 0} onRequested=${() => videos.reload()} />
    <h2>Videos</h2>
    <${ErrorBox} error=${videos.error} />
    ${videos.data?.data.length === 0 ? html`<p class="empty">No videos yet.</p>` : null}
    <ul class="assets">
      ${byRequest(videos.data?.data ?? []).map(
        (group) =>
          html`<li class="card" key=${group[0]!.id} data-request=${group[0]!.batch_id ?? group[0]!.id}>
            ${group.length > 1 ? html`<h3 class="h4">${group.length} formats, requested together</h3>` : null}
            <div class="formats">${group.map((v) => html`<${VideoCard} key=${v.id} initial=${v} onDeleted=${() => videos.reload()} />`)}</div>
          </li>`,
      )}
    </ul>
    ${
      p
        ? html`<div class="card">
            <h2 class="h3">Delete this property</h2>
            <p class="hint">Deletes its photos and videos with their files. Not possible while one of its videos is rendering.</p>
            <${ErrorBox} error=${error} />
            <button type="button" class="danger" onClick=${remove}>Delete property</button>
          </div>`
        : null
    }
  </section>`;
}

function Photos({ id, photos, onChanged }: { id: string; photos: Photo[]; onChanged: () => void }) {
  const [progress, setProgress] = useState<number | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [over, setOver] = useState(false);
  const input = useRef<HTMLInputElement>(null);

  const send = async (files: File[]) => {
    if (files.length === 0) return;
    setError(null);
    const form = new FormData();
    for (const f of files) form.append('photo', f, f.name);
    setProgress(0);
    try {
      await upload(`/v1/properties/${encodeURIComponent(id)}/photos`, form, setProgress);
      onChanged();
    } catch (err) {
      const details =
        err instanceof ApiError && err.details.length
          ? ` (${err.details.map((d) => `${files[Number(/\[(\d+)\]/.exec(d.path)?.[1])]?.name ?? d.path}: ${d.message}`).join('; ')})`
          : '';
      setError(messageOf(err) + details);
    } finally {
      setProgress(null);
      if (input.current) input.current.value = '';
    }
  };

  const remove = async (ph: Photo) => {
    if (!confirm(`Delete photo ${ph.filename}? Videos already made keep showing it.`)) return;
    setError(null);
    try {
      await call('DELETE', `/v1/properties/${encodeURIComponent(id)}/photos/${ph.id}`);
      onChanged();
    } catch (err) {
      setError(messageOf(err));
    }
  };

  return html`<div class="photos">
    <h2>Photos (${photos.length})</h2>
    <div
      class=${`dropzone${over ? ' over' : ''}`}
      onDragOver=${(e: DragEvent) => {
        e.preventDefault();
        setOver(true);
      }}
      onDragLeave=${() => setOver(false)}
      onDrop=${(e: DragEvent) => {
        e.preventDefault();
        setOver(false);
        void send([...(e.dataTransfer?.files ?? [])]);
      }}
    >
      <p>Drop JPEG, PNG or WebP photos here (up to 20 at once, 15 MiB each), or</p>
      <label for="photo-input" class="button">Choose photos</label>
      <input
        id="photo-input"
        ref=${input}
        class="visually-hidden-file"
        type="file"
        accept="image/jpeg,image/png,image/webp"
        multiple
        onChange=${(e: Event) => void send([...((e.currentTarget as HTMLInputElement).files ?? [])])}
      />
    </div>
    ${progress !== null ? html`<${Field} id="upload-progress" label="Uploading"><progress id="upload-progress" max="1" value=${progress}>${Math.round(progress * 100)} %</progress><//>` : null}
    <${ErrorBox} error=${error} />
    <ol class="photo-list">
      ${photos.map((ph) => html`<${PhotoItem} key=${ph.id} id=${id} ph=${ph} onChanged=${onChanged} onRemove=${(x: Photo) => void remove(x)} />`)}
    </ol>
  </div>`;
}

function RequestVideo({ id, hasPhotos, onRequested }: { id: string; hasPhotos: boolean; onRequested: () => void }) {
  const [formats, setFormats] = useState<string[]>(['16:9']);
  const [opts, setOpts] = useState({ captions: false, voiceover: false, unbranded: false, byRoom: false });
  const [error, setError] = useState<string | null>(null);
  const submit = async (e: Event) => {
    e.preventDefault();
    setError(null);
    if (formats.length === 0) return setError('Choose at least one format.');
    const body: Record<string, unknown> = {
      property_id: Number(id),
      template: 'tour',
      captions: opts.captions,
      voiceover: opts.voiceover,
      branded: !opts.unbranded,
    };
    if (opts.byRoom) body.photo_order = 'room';
    // One format is the API's plain request; several are one request listing a video per format.
    if (formats.length === 1) body.format = formats[0];
    else body.formats = FORMATS.filter((f) => formats.includes(f));
    try {
      await call('POST', '/v1/videos', { body });
      onRequested();
    } catch (err) {
      setError(messageOf(err) + (err instanceof ApiError && err.details.length ? `: ${err.details.map((d) => d.message).join('; ')}` : ''));
    }
  };
  const toggle = (f: string) => setFormats(formats.includes(f) ? formats.filter((x) => x !== f) : [...formats, f]);
  const check = (k: keyof typeof opts, label: string) =>
    html`<div class="check">
      <input type="checkbox" id=${`opt-${k}`} checked=${opts[k]} onChange=${() => setOpts({ ...opts, [k]: !opts[k] })} />
      <label for=${`opt-${k}`}>${label}</label>
    </div>`;
  return html`<form class="card" onSubmit=${submit} aria-labelledby="video-title">
    <h2 id="video-title" class="h3">Request a tour video</h2>
    <fieldset>
      <legend>Formats (several are rendered together)</legend>
      <div class="row">
        ${FORMATS.map(
          (f) =>
            html`<div class="check">
              <input
                type="checkbox"
                name="video-format"
                id=${`fmt-${f.replace(':', 'x')}`}
                value=${f}
                checked=${formats.includes(f)}
                onChange=${() => toggle(f)}
              />
              <label for=${`fmt-${f.replace(':', 'x')}`}>${f}</label>
            </div>`,
        )}
      </div>
    </fieldset>
    <fieldset>
      <legend>Options</legend>
      <div class="row">
        ${check('captions', 'Captions')} ${check('voiceover', 'Voice-over')} ${check('unbranded', 'Unbranded (no logo)')} ${check('byRoom', 'Photos by room')}
      </div>
    </fieldset>
    <${ErrorBox} error=${error} />
    <button type="submit">Request video</button>
    ${hasPhotos ? null : html`<p class="hint">No photos yet: the tour will be the title card alone.</p>`}
  </form>`;
}

function VideoCard({ initial, onDeleted }: { initial: Video; onDeleted: () => void }) {
  const [video, setVideo] = useState<Video>(initial);
  const [error, setError] = useState<string | null>(null);
  const finished = video.status === 'completed' || video.status === 'failed' || video.status === 'cancelled';
  const poll = async () => {
    try {
      setVideo(await call<Video>('GET', `/v1/videos/${video.id}`));
    } catch (err) {
      setError(messageOf(err));
    }
  };
  // A 2 s poll stays far inside a session's rate limit and leaves room for the rest of the page.
  useInterval(() => void poll(), finished ? null : 2000);
  const remove = async () => {
    if (!confirm(`Delete video #${video.id} and its files? Share links to it stop working.`)) return;
    setError(null);
    try {
      await call('DELETE', `/v1/videos/${video.id}`);
      onDeleted();
    } catch (err) {
      setError(messageOf(err));
    }
  };
  const cancel = async () => {
    setError(null);
    try {
      setVideo(await call<Video>('POST', `/v1/videos/${video.id}/cancel`));
    } catch (err) {
      setError(messageOf(err));
    }
  };
  const id = video.id;
  return html`<div class="video-status" data-video=${id} data-status=${video.status}>
    <h3 class="h4">Video #${id} <span class="badge">${video.format}</span></h3>
    <${Field} id=${`video-progress-${id}`} label=${`${video.status}${video.status === 'rendering' ? ` ${Math.round(video.progress * 100)} %` : ''}`}>
      <progress id=${`video-progress-${id}`} max="1" value=${video.progress}>${Math.round(video.progress * 100)} %</progress>
    <//>
    ${video.error ? html`<p class="error-box" role="alert">${video.error}</p>` : null}
    ${video.status === 'completed' && video.video_asset_id !== null ? html`<${AssetVideo} id=${video.video_asset_id} videoId=${id} posterId=${video.poster_asset_id} />` : null}
    <${ErrorBox} error=${error} />
    ${finished ? null : html`<button type="button" onClick=${cancel}>Cancel</button>`}
    <button type="button" class="danger" onClick=${remove} disabled=${video.status === 'rendering'}>Delete video</button>
  </div>`;
}

/** Lifetime of the URLs the page plays and downloads from (seconds): an hour, the API's default. */
const PLAYBACK_TTL_S = 3600;
/** Lifetime of a share link (seconds): seven days, the longest the API signs. */
const SHARE_TTL_S = 7 * 24 * 3600;

interface SignedUrl {
  url: string;
  expires_at: string;
}

function signedUrl(id: number, ttlS: number): Promise<SignedUrl> {
  return call<SignedUrl>('GET', `/v1/assets/${id}/url?ttl=${ttlS}`);
}

/**
 * A signed URL of the asset, for <video>, <img> and downloads: it opens without a credential
 * (which a <video src> could not send), streams with Range requests, and is taken as a path so
 * the page loads it from its own origin (the only one its Content-Security-Policy admits).
 */
function useSignedPath(id: number | null): { path: string | null; error: string | null } {
  const [path, setPath] = useState<string | null>(null);
  const [error, setError] = useState<string | null>(null);
  useEffect(() => {
    if (id === null) return undefined;
    let gone = false;
    void signedUrl(id, PLAYBACK_TTL_S).then(
      (s) => {
        const u = new URL(s.url);
        if (!gone) setPath(u.pathname + u.search);
      },
      (err: unknown) => {
        if (!gone) setError(messageOf(err));
      },
    );
    return () => {
      gone = true;
    };
  }, [id]);
  return { path, error };
}

function AssetVideo({ id, videoId, posterId }: { id: number; videoId: number; posterId: number | null }) {
  const { path, error } = useSignedPath(id);
  const poster = useSignedPath(posterId);
  return html`<div>
    <${ErrorBox} error=${error} />
    ${
      path
        ? html`<video
              src=${path}
              poster=${poster.path ?? undefined}
              controls
              preload="metadata"
              playsinline
              data-asset=${id}
              aria-label=${`Tour video, asset ${id}`}
            ></video>
            <div class="row">
              <a class="button" href=${path} download=${`tour-${videoId}.mp4`} data-download=${id}>Download MP4</a>
              <${ShareLink} id=${id} />
            </div>`
        : error
          ? null
          : html`<p>Loading video…</p>`
    }
  </div>`;
}

/** Makes a seven-day link to the video that opens without an account, copies it, and says until when it works. */
function ShareLink({ id }: { id: number }) {
  const [link, setLink] = useState<SignedUrl | null>(null);
  const [copied, setCopied] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const share = async () => {
    setError(null);
    try {
      const made = await signedUrl(id, SHARE_TTL_S);
      setLink(made);
      try {
        await navigator.clipboard.writeText(made.url);
        setCopied(true);
      } catch {
        // Clipboard refused (insecure origin, no permission): the link is shown selectable below.
        setCopied(false);
      }
    } catch (err) {
      setError(messageOf(err));
    }
  };
  return html`<div class="share">
    <button type="button" onClick=${share}>Share link</button>
    <${ErrorBox} error=${error} />
    ${
      link
        ? html`<p role="status" data-share=${id}>${copied ? 'Link copied. ' : ''}Anyone with the link can watch until ${fmtTime(link.expires_at)}.</p>
            <label class="sr-only" for=${`share-${id}`}>Share link</label>
            <input
              id=${`share-${id}`}
              class="share-url"
              readonly
              value=${link.url}
              onFocus=${(e: FocusEvent) => (e.currentTarget as HTMLInputElement).select()}
            />`
        : null
    }
  </div>`;
}

/** Videos of one request (one per format, same batch_id) together, newest request first. */
function byRequest(videos: Video[]): Video[][] {
  const groups = new Map<number, Video[]>();
  for (const v of videos) {
    const key = v.batch_id ?? v.id;
    groups.set(key, [...(groups.get(key) ?? []), v]);
  }
  return [...groups.values()].map((g) => g.sort((a, b) => a.id - b.id));
}

/** A signed path for a photo (an <img> cannot send the session's credential). */
function useSignedPhoto(propertyId: string, photoId: number): string | null {
  const [path, setPath] = useState<string | null>(null);
  useEffect(() => {
    let gone = false;
    void call<SignedUrl>('GET', `/v1/properties/${encodeURIComponent(propertyId)}/photos/${photoId}/url?ttl=${PLAYBACK_TTL_S}`).then(
      (s) => {
        const u = new URL(s.url);
        if (!gone) setPath(u.pathname + u.search);
      },
      () => {},
    );
    return () => {
      gone = true;
    };
  }, [propertyId, photoId]);
  return path;
}

function PhotoItem({ id, ph, onChanged, onRemove }: { id: string; ph: Photo; onChanged: () => void; onRemove: (ph: Photo) => void }) {
  const src = useSignedPhoto(id, ph.id);
  const [error, setError] = useState<string | null>(null);
  const tag = async (room: string) => {
    setError(null);
    try {
      await call('PATCH', `/v1/properties/${encodeURIComponent(id)}/photos/${ph.id}`, { body: { room: room || null } });
      onChanged();
    } catch (err) {
      setError(messageOf(err));
    }
  };
  return html`<li data-photo=${ph.id}>
    ${src ? html`<img class="thumb" src=${src} alt=${ph.filename} loading="lazy" width="96" height="72" />` : html`<span class="thumb"></span>`}
    <span>${ph.filename} · ${ph.width}×${ph.height} · ${(ph.size_bytes / 1024).toFixed(0)} KiB</span>
    <label class="sr-only" for=${`room-${ph.id}`}>Room of ${ph.filename}</label>
    <select id=${`room-${ph.id}`} value=${ph.room ?? ''} onChange=${(e: Event) => void tag((e.currentTarget as HTMLSelectElement).value)}>
      <option value="">no room</option>
      ${ROOMS.map((r) => html`<option value=${r}>${r}</option>`)}
    </select>
    <button type="button" class="danger small" onClick=${() => onRemove(ph)} aria-label=${`Delete photo ${ph.filename}`}>Delete</button>
    <${ErrorBox} error=${error} />
  </li>`;
}

/** Price and currency are optional on a property created through the API. */
function priceText(p: Property): string {
  return p.price === null ? '—' : `${p.price.toLocaleString()}${p.currency ? ` ${p.currency}` : ''}`;
}
