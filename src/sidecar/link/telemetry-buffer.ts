import { appendFile } from 'node:fs/promises';
import { join } from 'node:path';
import { readIfExists, STATE_DIR_FILES, writeFileAtomic } from '../state/state-dir.js';

/** A report as buffered: every report carries its own reportId (the control plane dedupes on it). */
export interface BufferedReport {
  reportId: string;
  [field: string]: unknown;
}

/** 48 h of reports at the default 60 s interval. */
export const DEFAULT_BUFFER_CAP = 2880;

interface Cursor {
  /** reportId of the newest report acknowledged (or dropped); everything up to it is gone. */
  lastAcked: string | null;
  dropped: number;
}

/**
 * The durable outbox of telemetry reports, in the state directory:
 *
 * - `telemetry.jsonl`: one report a line, oldest first, only ever appended to (plus an
 *   occasional compaction that rewrites it atomically with just the pending lines);
 * - `telemetry-cursor.json`: the reportId of the newest acknowledged report, written
 *   atomically after each 202, and the count dropped over the cap.
 *
 * A report is appended (and so on disk) before any attempt to send it, and counts as gone only
 * once the cursor passes it. A crash between a 202 and the cursor write resends that report
 * with the same reportId, which the control plane stores once. The cursor names a reportId
 * rather than a line count so that a crash in the middle of a compaction cannot skip lines.
 * A torn last line (a crash mid-append) is ignored at load.
 */
export class TelemetryBuffer {
  private readonly file: string;
  private readonly cursorFile: string;
  private pending: { id: string; line: string; written: boolean }[] = [];
  private cursor: Cursor = { lastAcked: null, dropped: 0 };
  /** Lines in the file before the first pending one. */
  private deadLines = 0;
  private writing: Promise<void> = Promise.resolve();

  constructor(
    dir: string,
    private readonly cap = DEFAULT_BUFFER_CAP,
  ) {
    this.file = join(dir, STATE_DIR_FILES.telemetry);
    this.cursorFile = join(dir, STATE_DIR_FILES.cursor);
  }

  get size(): number {
    return this.pending.length;
  }

  get dropped(): number {
    return this.cursor.dropped;
  }

  /** Reads what a previous run left; then compacts the file to the pending lines. */
  async load(): Promise<void> {
    const cursorText = await readIfExists(this.cursorFile);
    if (cursorText) {
      try {
        const c = JSON.parse(cursorText) as Partial<Cursor>;
        this.cursor = { lastAcked: typeof c.lastAcked === 'string' ? c.lastAcked : null, dropped: Number.isInteger(c.dropped) ? (c.dropped as number) : 0 };
      } catch {
        // A torn cursor can only be older than the truth: resending is deduped by reportId.
      }
    }
    const text = (await readIfExists(this.file)) ?? '';
    const rows: { id: string; line: string; written: boolean }[] = [];
    for (const line of text.split('\n')) {
      if (!line) continue;
      try {
        const value = JSON.parse(line) as Partial<BufferedReport>;
        if (typeof value.reportId === 'string') rows.push({ id: value.reportId, line, written: true });
      } catch {
        // torn last line of a crash mid-append
      }
    }
    const acked = this.cursor.lastAcked === null ? -1 : rows.findIndex((r) => r.id === this.cursor.lastAcked);
    this.pending = rows.slice(acked + 1);
    await this.compact();
  }

  /** Appends a report (durably on disk when this resolves); drops the oldest beyond the cap. */
  append(report: BufferedReport): Promise<void> {
    const line = JSON.stringify(report);
    const entry = { id: report.reportId, line, written: false };
    this.pending.push(entry);
    let ackDropped = false;
    while (this.pending.length > this.cap) {
      const gone = this.pending.shift()!;
      this.cursor = { lastAcked: gone.id, dropped: this.cursor.dropped + 1 };
      this.deadLines++;
      ackDropped = true;
    }
    return this.serial(async () => {
      // Dropped over the cap before its turn came: nothing to write.
      if (this.pending.includes(entry)) {
        await appendFile(this.file, `${line}\n`);
        entry.written = true;
      }
      if (ackDropped) await this.writeCursor();
    });
  }

  /** The oldest pending report, or null. */
  head(): BufferedReport | null {
    const first = this.pending[0];
    return first ? (JSON.parse(first.line) as BufferedReport) : null;
  }

  /** The raw JSON of the oldest pending report (sent as is, so a resend is byte-identical). */
  headLine(): { id: string; line: string } | null {
    const first = this.pending[0];
    return first ? { id: first.id, line: first.line } : null;
  }

  /** Marks the oldest pending report sent (after its 202). */
  ack(reportId: string): Promise<void> {
    const first = this.pending[0];
    if (!first || first.id !== reportId) return Promise.resolve();
    this.pending.shift();
    this.cursor = { ...this.cursor, lastAcked: reportId };
    this.deadLines++;
    return this.serial(async () => {
      await this.writeCursor();
      if (this.deadLines >= 64 && this.deadLines >= this.pending.length) await this.compact();
    });
  }

  private serial(fn: () => Promise<void>): Promise<void> {
    const next = this.writing.then(fn);
    this.writing = next.catch(() => {});
    return next;
  }

  private writeCursor(): Promise<void> {
    return writeFileAtomic(this.cursorFile, JSON.stringify(this.cursor));
  }

  /** Rewrites the file with the pending lines already written; the unwritten tail is appended after, by its own append. */
  private async compact(): Promise<void> {
    await writeFileAtomic(
      this.file,
      this.pending
        .filter((p) => p.written)
        .map((p) => `${p.line}\n`)
        .join(''),
    );
    this.deadLines = 0;
  }
}
