import { postgresTestDatabase } from '../helpers/databases.js';
import { onTestDatabase, webhookStoreContract } from './store-contract.js';

webhookStoreContract('PostgreSQL', onTestDatabase(postgresTestDatabase, false));
