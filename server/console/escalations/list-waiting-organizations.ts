import { z } from 'zod';
import { WaitingOrganizationSchema } from '../../domain/console/operator-view-schemas';
import { waitingOrganizations } from '../../domain/console/operator-views';
import { operatorProcedure } from '../console-procedures';

/** The organizations with escalations waiting, with how many: the inbox's filter. */
export const listWaitingOrganizationsProcedure = operatorProcedure.output(z.array(WaitingOrganizationSchema)).query(({ ctx }) => waitingOrganizations(ctx.services.db));
