/**
 * A newcomer who set SERVICE_LLM_MODEL (or only the base URL, or only the key) got a sidecar
 * whose characters never spoke and not a word about why: the dialogue tier needs both the base
 * URL and the model. The sidecar and `up` now warn once, naming what is missing.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { warnAboutHalfDialogue } from '../../src/cli/commands/sidecar.js';

function warnings(env: NodeJS.ProcessEnv): string[] {
  const out: string[] = [];
  warnAboutHalfDialogue(env, { info() {}, error() {}, warn: (m) => out.push(m) });
  return out;
}

test('one of the SERVICE_LLM_* variables without the base URL and the model is one warning naming what is missing; none or both, nothing', () => {
  assert.deepEqual(warnings({}), []);
  assert.deepEqual(warnings({ SERVICE_LLM_BASE_URL: 'http://127.0.0.1:1/v1', SERVICE_LLM_MODEL: 'm' }), []);
  assert.deepEqual(warnings({ SERVICE_LLM_MODEL: ' ' }), [], 'blank is not set');
  const [model] = warnings({ SERVICE_LLM_MODEL: 'gpt-x' });
  assert.match(model!, /^the dialogue tier is off: SERVICE_LLM_BASE_URL is not set/);
  const [base] = warnings({ SERVICE_LLM_BASE_URL: 'http://127.0.0.1:1/v1' });
  assert.match(base!, /SERVICE_LLM_MODEL is not set/);
  const [key] = warnings({ SERVICE_LLM_KEY: 'sk-1' });
  assert.match(key!, /SERVICE_LLM_BASE_URL and SERVICE_LLM_MODEL are not set/);
});
