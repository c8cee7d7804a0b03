import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { Intent, TickResponse } from '../../../brain/index.js';
import { seededRandom } from '../../../src/random.js';
import { appendTickJson, JsonGroupWriter, rewindTickJson, writeTickJson } from '../../../src/sidecar/tick/tick-json.js';

const INT32 = 2 ** 31;

/** Numbers the writer takes different ways: small and int32-edge integers, two-decimal values on both sides of 2^31 cents and of 2^31, big, odd and non-finite ones. */
function numberFrom(random: () => number): number {
  const r = random();
  const sign = random() < 0.3 ? -1 : 1;
  if (r < 0.2) return sign * Math.floor(random() * 10 ** Math.floor(random() * 10));
  if (r < 0.4) return (sign * Math.round(random() * 10 ** Math.floor(random() * 12) * 100)) / 100;
  if (r < 0.5) return sign * (INT32 - 3 + Math.floor(random() * 6));
  if (r < 0.6) return (sign * (INT32 * 100 - 300 + Math.floor(random() * 600))) / 100;
  if (r < 0.65) return sign * (INT32 - 3 + Math.floor(random() * 6) + 0.25);
  if (r < 0.7) return (sign * Math.round((INT32 / 100) * 100 + random() * 200 - 100)) / 100;
  if (r < 0.8) return sign * random() * 10 ** Math.floor(random() * 30 - 10);
  if (r < 0.85) return [0, -0, NaN, Infinity, -Infinity, 1e21, -1e21, 2 ** 53, 1e15, -1e15, 1e15 - 1, 1e12, 1e12 - 0.01][Math.floor(random() * 13)]!;
  return (sign * Math.round(random() * 1000 * 10)) / 10;
}

const WORDS = ['standing', 'walk', 'sprint', 'wave', 'he said "run"', 'back\\slash', 'tab\there', 'caf\u00e9', '\u2028', '🙂', '\ud800', '', 'x'.repeat(300)];

function stringFrom(random: () => number): string {
  return WORDS[Math.floor(random() * WORDS.length)]!;
}

function vecFrom(random: () => number): { x: number; y: number; z: number } {
  return { x: numberFrom(random), y: numberFrom(random), z: numberFrom(random) };
}

function intentFrom(random: () => number): Intent {
  switch (Math.floor(random() * 9)) {
    case 0:
      return { kind: 'MoveTo', to: vecFrom(random), speed: stringFrom(random) as 'walk' };
    case 1:
      return { kind: 'Engage', target: numberFrom(random), fire: random() < 0.5 };
    case 2:
      return { kind: 'Face', yaw_deg: numberFrom(random) };
    case 3:
      return { kind: 'Flee', from: numberFrom(random) };
    case 4:
      return { kind: 'Investigate', at: vecFrom(random) };
    case 5:
      return { kind: 'Idle', reason: stringFrom(random) };
    case 6:
      return { kind: 'Emote', name: stringFrom(random) };
    case 7:
      return { kind: 'Logoff' };
    default: {
      const say: Intent = { kind: 'Say', text: stringFrom(random), channel: 'radio', line_id: stringFrom(random) };
      if (random() < 0.5) say.audio_url = random() < 0.5 ? stringFrom(random) : undefined;
      return say;
    }
  }
}

function responseFrom(random: () => number): TickResponse {
  const intents = Array.from({ length: Math.floor(random() * 5) }, () => intentFrom(random));
  const response: TickResponse = { agent: numberFrom(random), posture: stringFrom(random) as 'standing', intents };
  // An explained reply (`?explain=1`) now and then, its strings and scores as odd as the rest.
  if (random() < 0.3) {
    response.why = {
      mode: stringFrom(random),
      goal: stringFrom(random),
      options: Array.from({ length: Math.floor(random() * 4) }, () => ({ name: stringFrom(random), score: numberFrom(random) })),
      rule: stringFrom(random),
    };
  }
  return response;
}

test('the reply writer gives JSON.stringify byte for byte over thousands of generated replies', () => {
  const random = seededRandom(16);
  for (let n = 0; n < 5000; n++) {
    const response = responseFrom(random);
    assert.equal(Buffer.from(writeTickJson(response)).toString('latin1'), Buffer.from(JSON.stringify(response)).toString('latin1'));
  }
});

test('a group body is the JSON array of its replies, also when it outgrows its buffer mid-batch', () => {
  const random = seededRandom(61);
  const group = new JsonGroupWriter();
  for (let batch = 0; batch < 40; batch++) {
    // Up to 1,500 replies of up to ~2 KB: most batches pass the writer's first 64 KB.
    const responses = Array.from({ length: Math.floor(random() * 1500) }, () => responseFrom(random));
    group.begin();
    for (const response of responses) group.reply(response);
    const body = Buffer.from(group.end());
    assert.ok(body.equals(Buffer.from(JSON.stringify(responses))), `batch ${batch} of ${responses.length}`);
  }
});

test('appended replies match JSON.stringify up to the lender buffer filling', () => {
  const random = seededRandom(7);
  rewindTickJson();
  const responses: TickResponse[] = [];
  const views: Uint8Array[] = [];
  for (;;) {
    const response = responseFrom(random);
    const view = appendTickJson(response);
    if (view === null) break;
    responses.push(response);
    views.push(view);
  }
  assert.ok(responses.length > 100);
  for (let k = 0; k < responses.length; k++) assert.ok(Buffer.from(views[k]!).equals(Buffer.from(JSON.stringify(responses[k]))));
  rewindTickJson();
});
