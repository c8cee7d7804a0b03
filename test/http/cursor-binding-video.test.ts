/**
 * The property-video API's lists (properties, videos, assets, audio tracks): a cursor pages only
 * the list, tenant and filters it came from (see cursor-binding.test.ts for the other services).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { tenantSession } from '../helpers/embedded.js';
import { createProperty, startVideoServer, testImage, waitForVideo } from '../video/helpers.js';
import { checkFilters, checkLists, ok, VIDEO_LISTS, type ListRead } from './cursor-binding-kit.js';

test('a video-API cursor pages only its list: another list, tenant or filter answers 400', async () => {
  const many = { limit: 100_000, windowMs: 60_000 };
  const s = await startVideoServer({ limits: { session: many, apiKey: many, tenantApiKeys: many } });
  const call = s.call.bind(s);
  try {
    const a = await tenantSession(s);
    const b = await tenantSession(s);
    const keyA = ok(await call('POST', '/v1/api-keys', { token: a.token, body: { name: 'a' } }), 'api key').key as string;
    const keyB = ok(await call('POST', '/v1/api-keys', { token: b.token, body: { name: 'b' } }), 'api key').key as string;
    const properties = [];
    for (let i = 0; i < 2; i++) properties.push(await createProperty(s, keyA));
    const photo = { photos: [{ filename: 'a.png', data_base64: testImage('png').toString('base64') }] };
    for (const pid of properties) ok(await call('POST', `/v1/properties/${pid}/photos`, { token: keyA, body: photo }), 'photo');
    const videos = [];
    for (const pid of [properties[0], ...properties])
      videos.push(
        ok(await call('POST', '/v1/videos', { token: keyA, body: { property_id: pid, template: 'tour', format: '1:1' } }), 'video', 202).id as number,
      );
    // One render is enough for the asset lists (a video and its poster); the others are cancelled, and stay listed.
    for (const id of videos.slice(1)) ok(await call('POST', `/v1/videos/${id}/cancel`, { token: keyA }), 'cancel', 200);
    assert.equal((await waitForVideo(s, keyA, videos[0]!)).status, 'completed');
    const wav = join(s.dir, 'track.wav');
    execFileSync('ffmpeg', ['-v', 'error', '-y', '-f', 'lavfi', '-i', 'anullsrc=r=22050:cl=mono', '-t', '1', wav]);
    for (let i = 0; i < 2; i++) {
      const r = await fetch(`${s.url}/v1/audio`, {
        method: 'POST',
        headers: { authorization: `Bearer ${keyA}`, 'content-type': 'audio/wav' },
        body: readFileSync(wav),
      });
      assert.equal(r.status, 201, await r.text());
    }

    const lists: [ListRead, ListRead][] = [
      [
        { list: 'properties', name: 'properties', path: '/v1/properties', token: keyA },
        { name: "B's properties", path: '/v1/properties', token: keyB },
      ],
      [
        { list: 'videos', name: 'videos', path: '/v1/videos', token: keyA },
        { name: "B's videos", path: '/v1/videos', token: keyB },
      ],
      [
        { list: 'assets', name: 'assets', path: '/v1/assets', token: keyA },
        { name: "B's assets", path: '/v1/assets', token: keyB },
      ],
      [
        { list: 'audio', name: 'audio', path: '/v1/audio', token: keyA },
        { name: "B's audio", path: '/v1/audio', token: keyB },
      ],
    ];

    assert.deepEqual(lists.map(([own]) => own.list).sort(), VIDEO_LISTS);
    await checkLists(call, lists);
    await checkFilters(call, [
      [
        { name: 'videos of p0', path: `/v1/videos?property_id=${properties[0]}&status=`, token: keyA },
        ['/v1/videos', `/v1/videos?property_id=${properties[1]}`, `/v1/videos?property_id=${properties[0]}&status=failed`],
      ],
      [
        { name: 'assets of v0', path: `/v1/assets?video_id=${videos[0]}`, token: keyA },
        ['/v1/assets', `/v1/assets?video_id=${videos[1]}`, `/v1/assets?video_id=${videos[0]}&property_id=${properties[0]}`],
      ],
      [{ name: 'unfiltered assets', path: '/v1/assets?property_id=', token: keyA }, [`/v1/assets?property_id=${properties[0]}`]],
    ]);
  } finally {
    await s.stop();
  }
});
