import { sqliteTestDatabase } from '../helpers/databases.js';
import { onTestDatabase, runControlPlaneStoreSuite } from './store-suite.js';

runControlPlaneStoreSuite('sqlite', onTestDatabase(sqliteTestDatabase));
