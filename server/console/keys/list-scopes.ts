import { scopes } from '../../domain/keys/scopes';
import { operatorProcedure } from '../console-procedures';
import { ScopeListSchema } from './api-key-schemas';

/** Every scope a key may hold, for the new-key form. */
export const listScopesProcedure = operatorProcedure.output(ScopeListSchema).query(() => [...scopes]);
