import { postgresTestDatabase } from '../helpers/databases.js';
import { onTestDatabase, runControlPlaneStoreSuite } from './store-suite.js';

runControlPlaneStoreSuite('postgres', onTestDatabase(postgresTestDatabase));
