import { z } from 'zod';
import { OrgIdSchema } from '../console-fields';

export const OrganizationDevicesInputSchema = z.object({ org_id: OrgIdSchema });
