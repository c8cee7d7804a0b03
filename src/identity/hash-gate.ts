import { HttpError } from '../http/errors.js';

/**
 * Bounds the password hashes (scrypt) computed at once. scrypt runs on libuv's thread pool,
 * which file reads share: unbounded, a flood of logins takes every thread and a download
 * waits behind it. At most `concurrency` run; up to `queue` more wait their turn in order;
 * past that the request is refused with 429 at once, before any hashing.
 */
export class HashGate {
  private running = 0;
  private readonly waiting: (() => void)[] = [];

  constructor(
    private readonly concurrency: number,
    private readonly queue: number,
  ) {
    if (!Number.isInteger(concurrency) || concurrency < 1) throw new Error(`password hash concurrency must be a positive integer, got ${concurrency}`);
    if (!Number.isInteger(queue) || queue < 0) throw new Error(`password hash queue must be a non-negative integer, got ${queue}`);
  }

  async run<T>(work: () => Promise<T>): Promise<T> {
    if (this.running >= this.concurrency) {
      if (this.waiting.length >= this.queue) {
        throw new HttpError('rate_limited', `Too many password checks at once (${this.concurrency} run, ${this.queue} wait); retry after 1 s.`, {
          headers: { 'retry-after': '1' },
        });
      }
      // The slot is handed over by the finishing run, so `running` never dips in between.
      await new Promise<void>((resolve) => this.waiting.push(resolve));
    } else this.running++;
    try {
      return await work();
    } finally {
      const next = this.waiting.shift();
      if (next) next();
      else this.running--;
    }
  }

  /** Hashes running and waiting, for tests and metrics. */
  get load(): { running: number; waiting: number } {
    return { running: this.running, waiting: this.waiting.length };
  }
}
