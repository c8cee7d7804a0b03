import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { ChildProcess } from 'node:child_process';
import type { VideoStore } from './store.js';
import type { AssetStorage } from './storage.js';
import { FfmpegError, runFfmpeg, type FfmpegBinary, type FfmpegConfinement } from './ffmpeg.js';
import {
  concatList,
  DEFAULT_BACKGROUND,
  DEFAULT_TEXT_COLOR,
  fitPhotoArgs,
  fittedPixels,
  planTour,
  type AudioPlan,
  type FormatJob,
  type Step,
  type TourPlan,
  type TitleCard,
  type TourTimings,
} from './tour.js';
import { renderTitleImage, titleLines } from './titlecard.js';
import { captionChars, captionTexts, captionTimes, voiceScript, wrap } from './captions.js';
import { findBrandFont } from './font.js';
import { FORMATS, type BrandingRecord, type Format, type NewAsset, type PhotoRecord, type PropertyRecord, type VideoId, type VideoRecord } from './types.js';

/** Writes `text` read aloud to a WAV file (the TTS add-on); rejects with the reason when it cannot. */
export type Speak = (text: string, outFile: string) => Promise<void>;

/**
 * What one ffmpeg process of a render may hold, by what it renders: a fixed base (ffmpeg, its
 * threads, the audio), each format's x264 encoder, and each photo's frames in each format (a
 * 1080p frame decoded, scaled, panned and dealt to its cross-fades: measured at about 28 MiB of
 * address space each, taken with a margin). A tour whose photos do not fit one process under the address-space limit
 * is rendered in segments of as many photos as fit.
 */
export const RENDER_MEMORY = { baseBytes: 700 * 1024 ** 2, perEncoderBytes: 160 * 1024 ** 2, perPhotoFrameBytes: 32 * 1024 ** 2 } as const;

/** Photos one ffmpeg process renders in `formats` under an address-space limit (at least 2; see segmentParts). */
export function photosPerSegment(formats: readonly Format[], addressSpaceBytes: number): number {
  const perPhoto = formats.reduce((a, f) => a + (RENDER_MEMORY.perPhotoFrameBytes * FORMATS[f].width * FORMATS[f].height) / (1920 * 1080), 0);
  const room = addressSpaceBytes - RENDER_MEMORY.baseBytes - formats.length * RENDER_MEMORY.perEncoderBytes;
  return Math.max(2, Math.floor(room / perPhoto));
}

/**
 * Picture processes of a render that run at once. ffmpeg 5.1 runs a process's filters on one
 * thread, which the encoder waits on: two processes, each with half the tour, keep two cores
 * busy where one left a third of them idle. The split depends on the photo count alone, never
 * on the machine, so the same inputs still give the same bytes.
 */
export const PICTURE_PROCESSES = 2;

/**
 * How much nicer than the server a render's picture processes run. They are the long, batch part
 * of a render: niced, they yield the CPU to the server's requests and to the short runs a render
 * waits on at its end (the voice add-on, which starts on first use, and the sound), which
 * otherwise queue behind two encoders for seconds. Nothing else of a render is niced.
 */
const PICTURE_NICE = 10;

/** How much nicer than the server a step of a render's plan runs. */
export function stepNice(step: Pick<Step, 'stage'>): number {
  return step.stage === 'picture' ? PICTURE_NICE : 0;
}

/**
 * How many photos each segment of an n-photo tour shows: at most what fits one process (`fit`),
 * and at least two segments of about equal work, so PICTURE_PROCESSES have something to share.
 * The first segment shows the title card too, so it gets the smaller half (4.5 photos and the
 * title, then 5.5, for 10; 2.5 and the title, then 2.5, for 5).
 */
export function segmentSizes(n: number, fit: number): { photosPerSegment: number; photosInFirstSegment: number } {
  const even = balanced(n, fit);
  const first = Math.min(even, Math.max(1, Math.ceil(n / PICTURE_PROCESSES)));
  // The later segment also shows the rest of the first one's last photo.
  return { photosInFirstSegment: first, photosPerSegment: Math.min(even, Math.max(2, n - first + 1)) };
}

/** Segments of equal size (34, 33, 33 rather than 49, 49, 2): the peak is the largest one's. */
function balanced(n: number, max: number): number {
  return n <= max ? max : Math.ceil(n / Math.ceil(n / max));
}

/** A render failure whose message is fit for the client; `detail` is for the log. */
export class RenderError extends Error {
  constructor(
    message: string,
    readonly detail: string = message,
  ) {
    super(message);
    this.name = 'RenderError';
  }
}

export interface RenderContext {
  store: VideoStore;
  storage: AssetStorage;
  ffmpeg: FfmpegBinary;
  /** The default font (title card, captions); null draws the title with the built-in bitmap font and leaves captions out. */
  fontFile: string | null;
  confinement: FfmpegConfinement;
  timings: TourTimings;
  preset: string;
  /** The TTS add-on; null when the server has none (a voice-over then fails the render with the reason). */
  speak: Speak | null;
}

export interface RenderHooks {
  /** The deadline of the whole render (epoch ms). */
  deadline: number;
  onSpawn(child: ChildProcess): void;
  onProgress(fraction: number): void;
  /** True once the render's result is no longer wanted (stopping, lease lost, cancelled): nothing more is started. */
  abandoned(): boolean;
}

/** A finished file of a render, ready to be stored. */
export interface RenderedFile {
  path: string;
  /** Its storage key, once stored. */
  key?: string;
  asset: Omit<NewAsset, 'storageKey'>;
}

/** The result of each video of a batch. */
export type Rendered = Map<VideoId, { video: RenderedFile; poster: RenderedFile }>;

/**
 * Renders the videos of one request (one per format, same property, photos and options)
 * together into `work`: the photos are fitted and decoded once for every format, the voice
 * is synthesised once, and each segment is one ffmpeg process making every format.
 * Null when abandoned part-way.
 */
export async function renderBatch(ctx: RenderContext, videos: readonly VideoRecord[], work: string, hooks: RenderHooks): Promise<Rendered | null> {
  const first = videos[0]!;
  const property = await ctx.store.getProperty(first.tenantId, first.propertyId);
  const photos = await ctx.store.photosByIds(first.photoIds);
  if (!property || photos.length !== first.photoIds.length) throw new RenderError('the property or some of its photos no longer exist');
  const options = first.options;
  const branding = options.branded ? await ctx.store.getBranding(first.tenantId) : null;
  const formats = videos.map((v) => v.format);
  // Every ffmpeg of the render, so that when one run fails the others running beside it are stopped too.
  const children = new Set<ChildProcess>();
  const onSpawn = (child: ChildProcess) => {
    children.add(child);
    child.once('close', () => children.delete(child));
    hooks.onSpawn(child);
  };
  const still = () => ({ durationS: 0, timeoutMs: hooks.deadline - Date.now(), confinement: ctx.confinement, onSpawn });

  const music = options.musicId === null ? null : await ctx.store.getAudio(first.tenantId, options.musicId);
  if (options.musicId !== null && !music) throw new RenderError(`music track ${options.musicId} no longer exists`);
  const [originals, logo, musicPath] = await Promise.all([
    Promise.all(photos.map((p) => ctx.storage.localPath('photos', p.storageKey, work))),
    branding?.logoKey ? ctx.storage.localPath('media', branding.logoKey, work) : Promise.resolve(null),
    music ? ctx.storage.localPath('media', music.storageKey, work) : Promise.resolve(null),
  ]);

  // The voice is synthesised while the photos are fitted and the picture is made (the add-on is another process): only the sound waits for it.
  const voice = options.voiceover ? synthesise(ctx, property, work) : Promise.resolve(null);
  voice.catch(() => {});
  const fitted = await fitPhotos(ctx, photos, originals, formats, work, still, hooks);
  if (fitted === null) return null;

  const fontFile = branding ? (findBrandFont(branding.font) ?? ctx.fontFile) : ctx.fontFile;
  const jobs: FormatJob[] = [];
  for (const [i, v] of videos.entries()) jobs.push(await formatJob(ctx, v, property, photos.length, branding, fontFile, logo !== null, work, i));
  const audio: AudioPlan = { voice: options.voiceover ? voiceFile(work) : null, voiceAtS: Math.min(1, ctx.timings.titleS / 3), music: musicPath };
  const plan = planTour({
    photos: fitted,
    formats: jobs,
    logo,
    audio,
    timings: ctx.timings,
    xfade: ctx.ffmpeg.xfade,
    preset: ctx.preset,
    ...segmentSizes(photos.length, photosPerSegment(formats, ctx.confinement.addressSpaceBytes)),
    work,
  });
  if (!(await runPlan(plan, voice, children, (step, progress) => runStep(ctx, step, photos, still, hooks, progress), hooks))) return null;
  const out: Rendered = new Map();
  for (const [i, v] of videos.entries()) {
    const { width, height } = FORMATS[v.format];
    const poster = jobs[i]!.poster;
    const file = async (path: string, contentType: string, durationS: number | null): Promise<RenderedFile> => ({
      path,
      asset: {
        kind: contentType === 'video/mp4' ? 'video' : 'poster',
        contentType,
        sizeBytes: (await stat(path)).size,
        width,
        height,
        durationS,
        etag: await etagOf(path),
      },
    });
    out.set(v.id, { video: await file(jobs[i]!.output, 'video/mp4', plan.durationS), poster: await file(poster, 'image/jpeg', null) });
  }
  return out;
}

/**
 * Runs a tour's plan: the picture's segments side by side (PICTURE_PROCESSES at a time), the sound
 * beside them once the voice is read, then the join (every format and its poster). False when
 * abandoned.
 */
async function runPlan(
  plan: TourPlan,
  voice: Promise<unknown>,
  children: Set<ChildProcess>,
  runOne: (step: Step, progress: (f: number) => void) => Promise<void>,
  hooks: RenderHooks,
): Promise<boolean> {
  const picture = plan.steps.filter((s) => s.stage === 'picture');
  const weight = picture.reduce((a, s) => a + s.durationS, 0) || 1;
  const made = picture.map(() => 0);
  let next = 0;
  const run = (step: Step, progress: (f: number) => void = () => {}) => runOne(step, progress);
  // Segments of the picture render side by side, each its own process; the sound beside them.
  const painter = async (stopped: () => boolean) => {
    while (next < picture.length && !hooks.abandoned() && !stopped()) {
      const i = next++;
      const step = picture[i]!;
      await run(step, (f) => {
        made[i] = f * step.durationS;
        hooks.onProgress(made.reduce((a, b) => a + b, 0) / weight);
      });
    }
  };
  await together(
    [
      ...Array.from({ length: PICTURE_PROCESSES }, () => painter),
      async (stopped) => {
        await voice;
        for (const step of plan.steps.filter((s) => s.stage === 'sound')) if (!hooks.abandoned() && !stopped()) await run(step);
      },
    ],
    children,
  );
  if (hooks.abandoned()) return false;
  for (const step of plan.steps.filter((s) => s.stage === 'join')) {
    for (const list of step.lists ?? []) await writeFile(list.path, concatList(list.files));
    await run(step);
  }
  return !hooks.abandoned();
}

/**
 * Runs tasks at once; when one fails, the ffmpeg processes still running are stopped, a task
 * starts no more (it is told by `stopped`) and, once every task has settled, the first failure
 * is thrown (not the stopped runs' own).
 */
async function together(tasks: ((stopped: () => boolean) => Promise<unknown>)[], children: Set<ChildProcess>): Promise<void> {
  let failure: { err: unknown } | null = null;
  const stopped = () => failure !== null;
  await Promise.all(
    tasks.map((task) =>
      task(stopped).catch((err: unknown) => {
        if (failure) return;
        failure = { err };
        for (const child of children) child.kill('SIGKILL');
      }),
    ),
  );
  if (failure) throw (failure as { err: unknown }).err;
}

function voiceFile(work: string): string {
  return join(work, 'voice.wav');
}

async function synthesise(ctx: RenderContext, property: PropertyRecord, work: string): Promise<string> {
  if (!ctx.speak) throw new RenderError('voice-over unavailable: this server has no text-to-speech add-on (SERVICE_TTS_ENGINE is off)');
  const out = voiceFile(work);
  try {
    await ctx.speak(voiceScript(property), out);
  } catch (err) {
    throw new RenderError('voice-over failed: the text-to-speech add-on could not read the script', err instanceof Error ? err.message : String(err));
  }
  return out;
}

/** Brings photos larger than every format needs down to that size, one process each; a photo ffmpeg cannot read is named. */
async function fitPhotos(
  ctx: RenderContext,
  photos: readonly PhotoRecord[],
  originals: readonly string[],
  formats: readonly Format[],
  work: string,
  still: () => { durationS: number; timeoutMs: number; confinement: FfmpegConfinement; onSpawn: (c: ChildProcess) => void },
  hooks: RenderHooks,
): Promise<string[] | null> {
  const limit = fittedPixels(formats);
  const fitted: string[] = [];
  for (const [i, p] of photos.entries()) {
    if (p.width * p.height <= limit) {
      fitted.push(originals[i]!);
      continue;
    }
    const out = join(work, `photo-${i}.jpg`);
    try {
      await runFfmpeg(ctx.ffmpeg.path, fitPhotoArgs(originals[i]!, formats, out), still());
    } catch (err) {
      if (err instanceof FfmpegError && err.cause === 'other' && !hooks.abandoned()) throw badPhoto(p, err);
      throw err;
    }
    if (hooks.abandoned()) return null;
    fitted.push(out);
  }
  return fitted;
}

function badPhoto(p: PhotoRecord, err: FfmpegError): RenderError {
  return new RenderError(`photo ${p.id} (${p.filename}) could not be decoded; delete it or upload it again`, err.message);
}

/** Runs one step; a failure naming one of its inputs is reported as that photo's. */
async function runStep(
  ctx: RenderContext,
  step: Step,
  photos: readonly PhotoRecord[],
  still: () => { timeoutMs: number; confinement: FfmpegConfinement; onSpawn: (c: ChildProcess) => void },
  hooks: RenderHooks,
  progress: (f: number) => void,
): Promise<void> {
  try {
    await runFfmpeg(ctx.ffmpeg.path, step.args, { ...still(), durationS: step.durationS, onProgress: progress, nice: stepNice(step) });
  } catch (err) {
    if (!(err instanceof FfmpegError) || err.cause !== 'other' || hooks.abandoned()) throw err;
    // ffmpeg names a bad input by its stream (`Error while decoding stream #3:0`) or by its path.
    const inputs = step.args.flatMap((a, i) => (a === '-i' ? [step.args[i + 1]!] : []));
    const m = /(?:decoding|demuxing|reading)[^#\n]*#(\d+):\d+/i.exec(err.stderr);
    const input = m ? Number(m[1]) : inputs.findIndex((path) => err.stderr.includes(`${path}:`));
    const photo = step.photoInputs.get(input);
    if (photo !== undefined) throw badPhoto(photos[photo]!, err);
    throw new FfmpegError(err.message, `${err.publicMessage} while rendering ${step.what}`, err.signal, err.cause, err.stderr);
  }
}

async function formatJob(
  ctx: RenderContext,
  v: VideoRecord,
  property: PropertyRecord,
  photoCount: number,
  branding: BrandingRecord | null,
  fontFile: string | null,
  hasLogo: boolean,
  work: string,
  index: number,
): Promise<FormatJob> {
  const lines = titleLines(property, v.format);
  let title: TitleCard;
  if (fontFile && ctx.ffmpeg.drawtext) {
    const files = await Promise.all(
      lines.map(async (l, i) => {
        const textFile = join(work, `title-${index}-${i}.txt`);
        await writeFile(textFile, l.text);
        return { textFile, scale: l.scale };
      }),
    );
    title = {
      kind: 'drawtext',
      fontFile,
      background: branding?.primaryColor ?? DEFAULT_BACKGROUND,
      color: branding?.secondaryColor ?? DEFAULT_TEXT_COLOR,
      lines: files,
      logo: hasLogo,
    };
  } else {
    const path = join(work, `title-${index}.ppm`);
    await writeFile(path, renderTitleImage(lines, v.format));
    title = { kind: 'image', path };
  }
  const captions = [];
  if (v.options.captions && fontFile && ctx.ffmpeg.drawtext) {
    const texts = captionTexts(property);
    const max = captionChars(v.format);
    for (const [i, cue] of captionTimes(texts.length, photoCount, ctx.timings).entries()) {
      const textFile = join(work, `caption-${index}-${i}.txt`);
      await writeFile(textFile, wrap(cue.texts.map((k) => texts[k]).join(' · '), max));
      captions.push({ textFile, fromS: cue.fromS, toS: cue.toS });
    }
  }
  return {
    format: v.format,
    title,
    captions,
    captionFont: captions.length ? fontFile : null,
    captionBox: branding?.primaryColor ?? '0x000000',
    cornerMark: hasLogo && photoCount > 0,
    output: join(work, `video-${index}.mp4`),
    poster: join(work, `poster-${index}.jpg`),
  };
}

export async function etagOf(path: string): Promise<string> {
  const hash = createHash('sha256');
  for await (const chunk of createReadStream(path)) hash.update(chunk as Buffer);
  return `"${hash.digest('hex').slice(0, 32)}"`;
}
