/**
 * The tests every reference client that runs here passes, each through its own driver: the
 * same fixtures in, the same JSON and intents out, the same behaviour against a real sidecar
 * and, for the clients that sign, a real control plane.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type Socket } from 'node:net';
import { startTestServer, tenantSession } from '../helpers/embedded.js';
import { signingVectors, SIGNING_VECTORS_FILE } from '../helpers/signing-vectors.js';
import { serverWithKey } from '../controlplane/helpers.js';
import {
  jsonOf,
  repliesFixture,
  repliesOneByOne,
  REPLIES_FIXTURE,
  startCliSidecar,
  startTokenSidecar,
  ticksFixture,
  TICKS_FIXTURE,
  TOKEN,
  type Run,
} from './helpers.js';

export const TOKEN_FORMS = ['bearer', 'header', 'query'] as const;

export interface ClientUnderTest {
  /** "python client", as test names start. */
  name: string;
  /** Why the client cannot run here (a missing tool), or null. */
  skip: string | null;
  /**
   * Runs the client's driver. Commands: `build TICKS` (the body), `parse REPLIES`, `live URL
   * TOKEN FORM TICKS` ({replies, ...}), `refused URL TOKEN FORM TICKS` ({raised, status,
   * code}), `silent URL TICKS` (the same with a 0.5 s timeout), and for clients that sign `sign VECTORS` and `controlplane URL SERVER_ID KEY`.
   */
  driver(...args: string[]): Promise<Run>;
  signs: boolean;
  /** Whether the client splits a list over the batch limit itself (driver command `many URL TOKEN TICKS N`). */
  splitsLongLists: boolean;
  /** Whether the client asks for `?errors=body` (then a refusal may arrive as a 200). */
  errorsInBody?: boolean;
  /** More checks on the `live` output for one token form. */
  checkLive?(out: any, form: string): void;
}

/** What runs without a peer: the fixtures and, for clients that sign, the test vectors. */
export function clientFixtureSuite(c: ClientUnderTest): void {
  const options = { skip: c.skip ?? false };

  test(`${c.name}: builds the fixture batch (escaped strings, optional parts left out)`, options, async () => {
    const r = await c.driver('build', TICKS_FIXTURE);
    assert.equal(r.status, 0, r.stderr);
    assert.deepEqual(JSON.parse(r.stdout), ticksFixture().ticks);
  });

  test(`${c.name}: parses the fixture reply into the expected intents`, options, async () => {
    assert.deepEqual(jsonOf(await c.driver('parse', REPLIES_FIXTURE)), repliesFixture().expected);
  });

  if (c.signs) {
    test(`${c.name}: signs every test vector like the control plane`, options, async () => {
      const got = jsonOf(await c.driver('sign', SIGNING_VECTORS_FILE)) as { canonical: string; signature: string; headers: Record<string, string> }[];
      const want = signingVectors();
      assert.equal(got.length, want.length);
      want.forEach((v, i) => {
        assert.equal(got[i]!.canonical, v.canonical, v.name);
        assert.equal(got[i]!.signature, v.signature, v.name);
        assert.deepEqual(got[i]!.headers, {
          Authorization: `Bearer ${v.key}`,
          'X-Service-Timestamp': String(v.timestamp),
          'X-Service-Signature': v.signature,
        });
      });
    });
  }
}

/** Against real peers: sidecars in process and as a process, a silent listener, a control plane. */
export function clientLiveSuite(c: ClientUnderTest): void {
  const options = { skip: c.skip ?? false };

  test(`${c.name}: a batch against a real sidecar, each token form, answers as the ticks one by one`, options, async () => {
    const expected = await repliesOneByOne(ticksFixture().ticks);
    for (const form of TOKEN_FORMS) {
      const sidecar = await startTokenSidecar();
      try {
        const out = jsonOf(await c.driver('live', sidecar.url, TOKEN, form, TICKS_FIXTURE));
        assert.deepEqual(out.replies, expected, form);
        c.checkLive?.(out, form);
      } finally {
        await sidecar.close();
      }
    }
  });

  test(`${c.name}: the same against \`brainstem sidecar --token T --workers 2\` run as a process`, options, async () => {
    const expected = await repliesOneByOne(ticksFixture().ticks);
    const sidecar = await startCliSidecar();
    try {
      const out = jsonOf(await c.driver('live', sidecar.url, TOKEN, 'header', TICKS_FIXTURE));
      assert.deepEqual(out.replies, expected);
    } finally {
      await sidecar.stop();
    }
  });

  test(`${c.name}: a wrong token fails the call with 401 unauthorized`, options, async () => {
    const sidecar = await startTokenSidecar();
    try {
      for (const form of TOKEN_FORMS) {
        const out = jsonOf(await c.driver('refused', sidecar.url, 'not-the-token', form, TICKS_FIXTURE));
        // A client that asks for ?errors=body gets the refusal as a 200 with the error in the
        // body from a sidecar that supports it, a 401 from one that does not.
        assert.deepEqual(
          { ...out, status: c.errorsInBody && out.status === 200 ? 401 : out.status },
          { raised: true, status: 401, code: 'unauthorized' },
          form,
        );
      }
    } finally {
      await sidecar.close();
    }
  });

  test(`${c.name}: a sidecar that never answers fails the call with a timeout`, options, async () => {
    // A real listener that accepts and then says nothing, as a hung sidecar would.
    const sockets: Socket[] = [];
    const silent = createServer((socket) => void sockets.push(socket));
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    try {
      const { port } = silent.address() as { port: number };
      const out = jsonOf(await c.driver('silent', `http://127.0.0.1:${port}`, TICKS_FIXTURE));
      assert.deepEqual(out, { raised: true, status: 0, code: 'timeout' });
    } finally {
      for (const socket of sockets) socket.destroy();
      await new Promise((resolve) => silent.close(resolve));
    }
  });

  if (c.splitsLongLists) {
    test(`${c.name}: more than 1,024 ticks go in several calls, answered in order`, options, async () => {
      const sidecar = await startTokenSidecar();
      try {
        const out = jsonOf(await c.driver('many', sidecar.url, TOKEN, TICKS_FIXTURE, '1100'));
        assert.equal(out.replies, 1100);
        assert.deepEqual(
          out.agents,
          Array.from({ length: 1100 }, (_, i) => i),
        );
      } finally {
        await sidecar.close();
      }
    });
  }

  if (!c.signs) return;

  test(`${c.name}: a signed config pull from a real control plane, then 304 with its ETag`, options, async () => {
    const s = await startTestServer();
    try {
      const session = await tenantSession(s);
      const server = await serverWithKey(s, session.token);
      const out = jsonOf(await c.driver('controlplane', s.url, String(server.serverId), server.key));
      assert.deepEqual(out, { version: 1, etag: '"v1"', notModified: true, etag2: '"v1"' });
    } finally {
      await s.stop();
    }
  });
}
