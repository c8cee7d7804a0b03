import { sqliteTestDatabase } from '../../helpers/databases.js';
import { conversationStoreContract } from './store-contract.js';

conversationStoreContract('SQLite', sqliteTestDatabase);
