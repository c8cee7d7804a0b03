import { test } from 'node:test';
import { fuzzServe } from './route-fuzz-harness.js';

test('every route of serve answers malformed paths, encodings, methods, headers and bodies in the error shape, and the process goes on', () => fuzzServe());
