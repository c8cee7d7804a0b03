import { sqliteTestDatabase } from '../helpers/databases.js';
import { runIdentityStoreSuite } from './store-suite.js';

runIdentityStoreSuite('sqlite', sqliteTestDatabase);
