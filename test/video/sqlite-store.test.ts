import { sqliteTestDatabase } from '../helpers/databases.js';
import { onTestDatabase, videoStoreContract } from './store-contract.js';

videoStoreContract('SQLite', onTestDatabase(sqliteTestDatabase, true));
