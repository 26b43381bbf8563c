import { z } from 'zod';
import { OrgIdSchema } from '../console-fields';

export const OrganizationDevicesInputSchema = z.object({ org_id: OrgIdSchema });

/** A device of an organization: a device of another organization is 404 device_not_found, as on /v1. */
export const DeviceActionInputSchema = z.object({ org_id: OrgIdSchema, device_id: z.string().max(200) });
