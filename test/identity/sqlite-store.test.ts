import { sqliteTestDatabase } from '../helpers/databases.js';
import { identityStoreContract } from './store-contract.js';

identityStoreContract('sqlite', sqliteTestDatabase);
