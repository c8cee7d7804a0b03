import { postgresTestDatabase } from '../helpers/databases.js';
import { runIdentityStoreSuite } from './store-suite.js';

runIdentityStoreSuite('postgres', postgresTestDatabase);
