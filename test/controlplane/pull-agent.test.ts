import test from 'node:test';
import assert from 'node:assert/strict';
import { AGENT_EVERY_MS, SidecarPulls } from '../../src/controlplane/connections.js';
import type { ServerId } from '../../src/controlplane/types.js';

// The signed pull reads its User-Agent at most once a second per server (it is only shown):
// a pull that did not read it keeps the one recorded, and the next due read replaces it.
test('a pull that did not read the User-Agent keeps the recorded one; it is read again once a second', () => {
  const pulls = new SidecarPulls();
  const id = 7 as ServerId;
  assert.equal(pulls.agentDue(id, 0), true);
  pulls.pulled(id, 1, 'brainstem-sidecar/1.0.0', 1000);
  assert.equal(pulls.agentDue(id, 1000 + AGENT_EVERY_MS - 1), false);
  pulls.pulled(id, 2, null, 1500);
  assert.deepEqual(pulls.get(id), { at: 1500, version: 2, userAgent: 'brainstem-sidecar/1.0.0', agentAt: 1000 });
  assert.equal(pulls.agentDue(id, 1000 + AGENT_EVERY_MS), true);
  pulls.pulled(id, 2, undefined, 2000);
  assert.equal(pulls.get(id)!.userAgent, '');
  // A first pull that did not read it still counts as a pull.
  pulls.pulled(8 as ServerId, 1, null, 10);
  assert.deepEqual(pulls.get(8 as ServerId), { at: 10, version: 1, userAgent: '', agentAt: 10 });
});
