// The thread of BackgroundCheckpoints (checkpointer.ts): its own connection to the file, copying
// committed WAL frames into the database file with PASSIVE checkpoints, which never wait for and
// never block the writer. SQLite syncs the WAL before the copy and the database file after it
// (synchronous=NORMAL), the same as the writer's own automatic checkpoint did.
import Database from 'better-sqlite3';
import { parentPort, workerData } from 'node:worker_threads';
import { CHECKPOINT_IDLE_MAX_MS, CHECKPOINT_INTERVAL_MS, type CheckpointerData } from './checkpointer.js';

const { file } = workerData as CheckpointerData;
const port = parentPort!;
const db = new Database(file, { fileMustExist: true });
db.pragma('synchronous = NORMAL');

let timer: NodeJS.Timeout | undefined;
let wait = CHECKPOINT_INTERVAL_MS;
let lastLog = -1;
let retried = false;

function run(): void {
  timer = undefined;
  try {
    const [r] = db.pragma('wal_checkpoint(PASSIVE)') as { busy: number; log: number; checkpointed: number }[];
    // The writer committed during the copy: take the rest at once (once), so the WAL can start over from its beginning.
    retried = r!.checkpointed < r!.log && !retried;
    if (retried) wait = 1;
    else if (r!.log === lastLog) wait = Math.min(wait * 2, CHECKPOINT_IDLE_MAX_MS); // nothing written since: look less often
    else wait = CHECKPOINT_INTERVAL_MS;
    lastLog = r!.log;
  } catch (err) {
    // SQLITE_BUSY (another checkpoint runs: the writer's fallback) or a passing I/O error: try again at the next turn.
    port.postMessage({ warning: String(err) });
    wait = CHECKPOINT_IDLE_MAX_MS;
  }
  timer = setTimeout(run, wait);
}

port.on('message', () => {
  if (timer) clearTimeout(timer);
  db.close();
  port.close();
});
port.postMessage({ ready: true });
timer = setTimeout(run, 0);
