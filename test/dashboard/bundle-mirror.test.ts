import test from 'node:test';
import assert from 'node:assert/strict';
import { BUNDLE_LIMITS, ECONOMIES, POLICY_KEYS, TRAIT_NAMES } from '../../brain/index.js';
import * as page from '../../dashboard/bundle.js';

// The page runs in the browser and cannot import brain/, so its form validator keeps its own
// copy of the bundle's names and limits; this keeps the copy equal to the one definition.
test("the dashboard's bundle form uses the brain's policy keys, traits, economies and limits", () => {
  assert.deepEqual(page.POLICY_KEYS, POLICY_KEYS);
  assert.deepEqual(page.TRAIT_NAMES, TRAIT_NAMES);
  assert.deepEqual(page.ECONOMIES, ECONOMIES);
  assert.deepEqual(page.LIMITS, BUNDLE_LIMITS);
});
