import type { TickResponse } from '../../../brain/index.js';
import type { Encoding } from '../../http/codec.js';
import { msgpackEncoder } from './handler.js';
import type { TickFailure } from './tick-array.js';
import { JsonGroupWriter } from './tick-json.js';
import { writeTickMsgpack } from './tick-msgpack.js';

/**
 * The 200 body of a POST /ticks reply, written element by element in the body's encoding: an
 * array of each element's reply (the bytes /tick gives for it) or failure, in order. JSON is
 * written straight into one buffer; MessagePack replies are joined once at the end.
 * One per process, used synchronously: the body end() gives is valid until the next begin().
 */
export class GroupBody {
  private readonly json = new JsonGroupWriter();
  private encoding: Encoding = 'json';
  private readonly parts: Uint8Array[] = [];

  /** Starts a body of `count` elements. */
  begin(encoding: Encoding, count: number): void {
    this.encoding = encoding;
    if (encoding === 'json') {
      this.json.begin();
      return;
    }
    this.parts.length = 0;
    this.parts.push(
      count < 16
        ? Buffer.from([0x90 + count])
        : count < 0x10000
          ? Buffer.from([0xdc, count >> 8, count & 0xff])
          : Buffer.from([0xdd, count >>> 24, (count >> 16) & 0xff, (count >> 8) & 0xff, count & 0xff]),
    );
  }

  /** The next element: the brain's response, encoded as /tick encodes it. On a throw nothing of it is written. */
  reply(response: TickResponse): void {
    if (this.encoding === 'json') this.json.reply(response);
    else this.parts.push(writeTickMsgpack(response) ?? msgpackEncoder.encode(response));
  }

  /** The next element: a reply already encoded. */
  encoded(body: Uint8Array): void {
    if (this.encoding === 'json') this.json.bytes(body);
    else this.parts.push(body);
  }

  /** The next element: a failure, `{agent?, error}`. */
  failure(failure: TickFailure): void {
    if (this.encoding === 'json') this.json.text(JSON.stringify(failure.toBody()));
    else this.parts.push(msgpackEncoder.encode(failure.toBody()));
  }

  end(): Uint8Array {
    return this.encoding === 'json' ? this.json.end() : Buffer.concat(this.parts);
  }
}

export const groupBody = new GroupBody();
