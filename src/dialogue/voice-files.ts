import { unlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { PRIVATE_DIR_MODE, PRIVATE_FILE_MODE } from '../store/files.js';
import { makeDir } from '../store/make-dir.js';

/** File extensions of the voice clips accepted for transcription, by media type. */
const AUDIO_EXT: Record<string, string> = { 'audio/wav': 'wav', 'audio/mpeg': 'mp3', 'audio/ogg': 'ogg', 'audio/webm': 'webm' };

/**
 * Voice clips being written and transcribed at once; POST /voice refuses more (503) rather than
 * accept a clip the transcriber's queue would drop, and so bounds the clips on disk.
 */
export const MAX_VOICE_CLIPS = 16;

/**
 * The audio directory of the dialogue tier: synthesised lines kept for the game to fetch (the
 * newest `maxFiles`, older ones deleted), and incoming voice clips, written privately under
 * `incoming/` for the transcriber and deleted once read.
 */
export class VoiceFiles {
  private readonly kept: string[] = [];

  constructor(
    readonly dir: string,
    private readonly maxFiles: number,
  ) {}

  /** Keeps a synthesised file, deleting the oldest beyond the limit. */
  keep(file: string): void {
    this.kept.push(file);
    while (this.kept.length > this.maxFiles) {
      const old = this.kept.shift()!;
      unlink(join(this.dir, old)).catch(() => {});
    }
  }

  /** Writes an incoming clip as `name` plus the extension of its media type; resolves with its path. */
  async writeIncoming(name: string, audio: Buffer, mime: string): Promise<string> {
    const dir = join(this.dir, 'incoming');
    await makeDir(dir, PRIVATE_DIR_MODE);
    const path = join(dir, `${name}.${AUDIO_EXT[mime] ?? 'bin'}`);
    await writeFile(path, audio, { mode: PRIVATE_FILE_MODE });
    return path;
  }

  /** Deletes an incoming clip once it was read; a clip already gone is fine. */
  dropIncoming(path: string): void {
    unlink(path).catch(() => {});
  }
}
