import { postgresTestDatabase } from '../../helpers/databases.js';
import { conversationStoreContract } from './store-contract.js';

conversationStoreContract('PostgreSQL', postgresTestDatabase);
