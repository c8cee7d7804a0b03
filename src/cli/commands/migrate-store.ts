import type { Command } from 'commander';
import { parseDatabaseUrl } from '../../store/database.js';
import { progress } from '../progress.js';
import { CliError, printJson } from '../util.js';

/** `brainstem migrate-store`: a SQLite database moved to PostgreSQL, ids and all. */
export function registerMigrateStore(program: Command): void {
  program
    .command('migrate-store')
    .description('copy every table of every service from a SQLite file to an empty PostgreSQL database (ids and sequences kept)')
    .requiredOption('--from <url>', 'the source, sqlite:PATH')
    .requiredOption('--to <url>', 'the target, postgres://USER:PASSWORD@HOST:PORT/DATABASE (must be empty)')
    .option('--json', 'print the tables copied as JSON')
    .action(async (flags: { from: string; to: string; json?: boolean }) => {
      const from = location(flags.from, '--from');
      const to = location(flags.to, '--to');
      if (from.kind !== 'sqlite') throw new CliError('--from must be a sqlite:PATH database');
      if (to.kind !== 'postgres') throw new CliError('--to must be a postgres:// database');
      // Loaded only when the command runs: both stores' modules, which other commands need not load.
      const { migrateStore, MigrateStoreError } = await import('../migrate-store.js');
      let report;
      const shown = progress({ label: 'migrate-store', total: null, unit: 'rows', json: flags.json === true });
      try {
        report = await migrateStore(from.file, to.url, { onRows: (done, total) => shown.update(done, total) });
        shown.finish();
      } catch (err) {
        if (err instanceof MigrateStoreError) throw new CliError(err.message);
        throw err;
      }
      if (flags.json) return printJson(report);
      const rows = report.tables.reduce((n, t) => n + t.rows, 0);
      process.stdout.write(`copied ${rows} rows in ${report.tables.length} tables to PostgreSQL\n`);
      for (const t of report.tables) process.stdout.write(`  ${t.name.padEnd(28)} ${t.rows}\n`);
      if (report.skipped.length > 0) process.stdout.write(`left behind (brainstem up's local credentials): ${report.skipped.join(', ')}\n`);
    });
}

function location(raw: string, flag: string) {
  try {
    return parseDatabaseUrl(raw);
  } catch (err) {
    throw new CliError(`${flag}: ${(err as Error).message}`);
  }
}
