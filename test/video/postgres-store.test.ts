import { postgresTestDatabase } from '../helpers/databases.js';
import { onTestDatabase, videoStoreContract } from './store-contract.js';

videoStoreContract('PostgreSQL', onTestDatabase(postgresTestDatabase, false));
