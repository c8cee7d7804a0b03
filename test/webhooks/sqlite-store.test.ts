import { sqliteTestDatabase } from '../helpers/databases.js';
import { onTestDatabase, webhookStoreContract } from './store-contract.js';

webhookStoreContract('SQLite', onTestDatabase(sqliteTestDatabase, true));
