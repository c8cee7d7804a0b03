/**
 * Modes of everything the services create on disk: the database (with its -wal and -shm,
 * which SQLite creates with the database file's mode), the data directory, state files.
 * They hold secrets (webhook signing secrets, keys, brain memory), so only the owner reads them.
 */
export const PRIVATE_FILE_MODE = 0o600;
export const PRIVATE_DIR_MODE = 0o700;
