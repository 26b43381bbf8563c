import { z } from 'zod';
import { OrgIdSchema } from '../console-fields';

export const RecentTasksInputSchema = z.object({ org_id: OrgIdSchema });

export const TaskInputSchema = z.object({ task_id: z.string().max(200) });
