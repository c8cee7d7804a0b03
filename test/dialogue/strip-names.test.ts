import { test } from 'node:test';
import assert from 'node:assert/strict';
import { NEUTRAL_NAME, stripNames } from '../../src/dialogue/phrase-cache.js';
import { seededRandom } from '../../src/random.js';

/** stripNames without its shortcut: every name compiled and applied. */
function reference(text: string, names: readonly string[]): string {
  let out = text;
  for (const name of names) {
    const n = name.trim();
    if (n.length < 2) continue;
    const escaped = n.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
    out = out.replace(new RegExp(`(?<![\\p{L}\\p{N}_])${escaped}(?![\\p{L}\\p{N}_])`, 'giu'), NEUTRAL_NAME);
  }
  return out;
}

test('stripNames skips names absent from a line without changing any result, Unicode case folding included', () => {
  const names = ['Alex', 'ross', 'KIM', 'Zoë', 'Straße', 'x', ' Jo ', 'a.b', 'Ann-Marie', 'friend', 'Kelvin', 'sam'];
  const pieces = [
    'Alex',
    'ALEX',
    'alexander',
    'Roſs',
    'ROSS',
    'Kim',
    '\u212Aim',
    'zoë',
    'STRASSE',
    'straße',
    'jo',
    'a.b',
    'axb',
    'ann-marie',
    'Friend',
    '\u212Aelvin',
    'ſam',
    'SAM',
    '!',
    ', ',
    ' ',
    '42',
    '_',
    'über',
  ];
  const rand = seededRandom(5);
  for (let i = 0; i < 3000; i++) {
    const words = Array.from({ length: 1 + Math.floor(rand() * 8) }, () => pieces[Math.floor(rand() * pieces.length)]!);
    const text = words.join(rand() < 0.5 ? ' ' : '');
    const some = names.filter(() => rand() < 0.4);
    assert.equal(stripNames(text, some), reference(text, some), JSON.stringify({ text, some }));
  }
  assert.equal(stripNames('Ro\u017Fs, watch out', ['Ross']), `${NEUTRAL_NAME}, watch out`, 'long s folds to s');
  assert.equal(stripNames('\u212Aim!', ['kim']), `${NEUTRAL_NAME}!`, 'the Kelvin sign folds to k');
});
