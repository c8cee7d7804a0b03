import { postgresTestDatabase } from '../helpers/databases.js';
import { onTestDatabase, controlPlaneStoreContract } from './store-contract.js';

controlPlaneStoreContract('postgres', onTestDatabase(postgresTestDatabase));
