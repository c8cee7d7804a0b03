import { postgresTestDatabase } from '../helpers/databases.js';
import { identityStoreContract } from './store-contract.js';

identityStoreContract('postgres', postgresTestDatabase);
