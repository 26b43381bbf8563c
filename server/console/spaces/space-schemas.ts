import { z } from 'zod';
import { DisplayNameSchema, OrgIdSchema } from '../console-fields';

export const NewSpaceInputSchema = z.object({ org_id: OrgIdSchema, name: DisplayNameSchema });
