import { h } from 'preact';
import htm from 'htm';

/** Tagged templates over Preact's h: JSX-like markup with no build step beyond tsc. */
export const html = htm.bind(h);
