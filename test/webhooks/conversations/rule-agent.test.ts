import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { DEMO_KNOWLEDGE } from '../../../src/cli/demo-widget.js';
import { ruleAgent } from '../../../src/webhooks/conversations/agent.js';
import { defaultSettings } from '../../../src/webhooks/conversations/types.js';

function answer(question: string, knowledge = DEMO_KNOWLEDGE): string {
  const settings = defaultSettings('Demo widget');
  settings.agent.knowledge = knowledge;
  let text = '';
  for (const e of ruleAgent({ settings, history: [{ role: 'visitor', text: question }] })) if (e.kind === 'delta') text += e.text;
  return text;
}

test('the README\'s first question to the demo widget is answered from its knowledge, not with "I\'m not sure"', () => {
  const readme = readFileSync(new URL('../../../../README.md', import.meta.url), 'utf8');
  const question = /ask something \("([^"]+)"\)/.exec(readme)?.[1];
  assert.ok(question, 'the README names a question to ask the demo widget');
  assert.match(answer(question), /^Installing: run npm start/);
});

test('the rule agent compares words without their endings: install, installation, installing; webhook, webhooks', () => {
  for (const q of ['How do I install it?', 'Installation steps?', 'installing, please']) assert.match(answer(q), /^Installing:/, q);
  assert.match(answer('Which webhook events are there?'), /^Webhooks:/);
  // Short words are left whole, and a question with nothing in common still gets the fallback.
  assert.match(answer('the news?'), /^I'm not sure/);
});
