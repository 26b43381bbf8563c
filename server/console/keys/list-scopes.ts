import { z } from 'zod';
import { scopes } from '../../domain/keys/scopes';
import { operatorProcedure } from '../console-procedures';

/** Every scope a key may hold, for the new-key form. */
export const listScopesProcedure = operatorProcedure.output(z.array(z.enum(scopes))).query(() => [...scopes]);
