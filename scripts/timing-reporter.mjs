// A node:test reporter for `run-tests.mjs --timings`: one line per top-level test, its
// duration in ms and the file it came from, tab-separated.
export default async function* timingReporter(source) {
  for await (const event of source) {
    if ((event.type === 'test:pass' || event.type === 'test:fail') && event.data.nesting === 0 && event.data.file) {
      yield `${event.data.details.duration_ms}\t${event.data.file}\n`;
    }
  }
}
