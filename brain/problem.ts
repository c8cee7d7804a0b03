/** A problem found in input, located by a dotted path such as `flavor.themes[2].weight`. */
export interface Problem {
  path: string;
  message: string;
}
