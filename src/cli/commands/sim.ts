import { writeFileSync } from 'node:fs';
import type { Command } from 'commander';
import { progress } from '../progress.js';
import { CliError, parseInteger, printJson } from '../util.js';
import { DEMO_DIALOGUE_HELP } from './sidecar.js';

interface SimFlags {
  sidecar?: string;
  token?: string;
  record?: string;
  json?: boolean;
  workers?: string;
  quiet?: boolean;
  html?: string;
  demoDialogue?: boolean;
}

/** `brainstem sim` and `brainstem replay`: the scenario simulator in bench/sim, driven over real HTTP. */
export function registerSim(program: Command): void {
  program
    .command('sim')
    .description('run a simulator scenario against a real sidecar and print its timeline and expectations (exit 1 when one fails)')
    .argument('<scenario>', 'scenario JSON file (see bench/sim/scenarios/)')
    .option('--sidecar <url>', 'use this running sidecar instead of spawning one on the scenario bundle')
    .option('--token <token>', 'bearer token for --sidecar')
    .option('--workers <n>', 'worker threads for the spawned sidecar')
    .option('--record <file>', 'write every tick and reply as JSON lines, for brainstem replay')
    .option(
      '--html <file>',
      'also write one self-contained page replaying the run on a map (pan, zoom, play, scrub, filters; click a character for its why, mode strip and path)',
    )
    .option('--demo-dialogue', `in the spawned sidecar, ${DEMO_DIALOGUE_HELP}`)
    .option('--quiet', 'print only the expectation results')
    .option('--json', 'print the result as JSON')
    .action(async (file: string, flags: SimFlags) => {
      const { loadScenario, runScenario } = await import('../../../bench/sim/run.js');
      const { ReplayRecorder } = await import('../../../bench/sim/replay-page.js');
      const scenario = loadScenario(file);
      if (flags.demoDialogue && flags.sidecar)
        throw new CliError('--demo-dialogue applies to the sidecar sim starts; start yours with brainstem sidecar --demo-dialogue');
      const page = flags.html ? new ReplayRecorder(scenario) : null;
      const shown = progress({ label: `sim ${scenario.name}`, total: null, unit: 'steps', json: flags.json === true });
      const result = await runScenario(scenario, {
        ...(page ? { onFrame: page.onFrame } : {}),
        ...(flags.sidecar ? { sidecarUrl: flags.sidecar } : {}),
        ...(flags.token ? { token: flags.token } : {}),
        ...(flags.record ? { recordFile: flags.record } : {}),
        ...(flags.workers !== undefined ? { workers: parseInteger(flags.workers, '--workers', 0, 64) } : {}),
        ...(flags.demoDialogue ? { demoDialogue: true } : {}),
        onStep: (done, steps) => shown.update(done, steps),
      });
      shown.finish();
      if (page && flags.html) writeFileSync(flags.html, page.html());
      if (flags.json) printJson(result);
      else {
        if (!flags.quiet) {
          for (const e of result.timeline)
            process.stdout.write(`${e.t.toFixed(2).padStart(8)}s  agent ${String(e.agent).padEnd(5)} ${e.posture.padEnd(9)} ${e.intents}\n`);
        }
        for (const r of result.results) process.stdout.write(`${r.pass ? 'PASS' : 'FAIL'}  ${JSON.stringify(r.expectation)}  (${r.detail})\n`);
        const silent = result.results.some((r) => !r.pass && 'kind' in r.expectation && r.expectation.kind === 'Say');
        if (silent && !flags.demoDialogue && !flags.sidecar)
          process.stdout.write(
            '  (no line was said: characters talk with a model configured, SERVICE_LLM_BASE_URL and SERVICE_LLM_MODEL, or with --demo-dialogue)\n',
          );
        process.stdout.write(
          `${result.scenario}: ${result.ticks} ticks, ${result.results.filter((r) => r.pass).length}/${result.results.length} expectations met\n`,
        );
      }
      if (!result.pass) process.exitCode = 1;
    });
  registerReplay(program);
}

/** `brainstem replay`: a recorded session re-sent to a fresh sidecar, every reply compared. */
function registerReplay(program: Command): void {
  program
    .command('replay')
    .description('re-send a recorded session to a fresh sidecar and check every reply is reproduced exactly (exit 1 on any difference)')
    .argument('<file>', 'a file written by brainstem sim --record')
    .option('--sidecar <url>', 'use this running sidecar instead of spawning one on the recorded bundle')
    .option('--workers <n>', 'worker threads for the spawned sidecar')
    .option('--json', 'print the result as JSON')
    .action(async (file: string, flags: SimFlags) => {
      const { replay } = await import('../../../bench/sim/run.js');
      const shown = progress({ label: `replay ${file}`, total: null, unit: 'ticks', json: flags.json === true });
      const result = await replay(file, {
        onTick: (done, total) => shown.update(done, total),
        ...(flags.sidecar ? { sidecarUrl: flags.sidecar } : {}),
        ...(flags.workers !== undefined ? { workers: parseInteger(flags.workers, '--workers', 0, 64) } : {}),
      }).catch((err: Error) => {
        throw new CliError(err.message);
      });
      shown.finish();
      if (flags.json) printJson(result);
      else {
        for (const m of result.mismatches) process.stdout.write(`line ${m.line} (t=${m.t}s): expected ${m.expected}\n  got ${m.actual}\n`);
        process.stdout.write(
          `${file}: ${result.ticks} ticks, ${result.mismatches.length === 0 ? 'every reply reproduced' : `${result.mismatches.length} differ`}\n`,
        );
      }
      if (result.mismatches.length > 0) process.exitCode = 1;
    });
}
