import { sqliteTestDatabase } from '../helpers/databases.js';
import { onTestDatabase, controlPlaneStoreContract } from './store-contract.js';

controlPlaneStoreContract('sqlite', onTestDatabase(sqliteTestDatabase));
