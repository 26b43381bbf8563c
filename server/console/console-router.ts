import { router } from '../trpc/init';
import { getAnswerLinkProcedure } from './answer-links/get-answer-link';
import { openAnswerLinkProcedure } from './answer-links/open-answer-link';
import { getDeviceProcedure } from './devices/get-device';
import { getEscalationProcedure } from './escalations/get-escalation';
import { releaseTakeoverProcedure } from './sessions/release-takeover';
import { takeOverDeviceProcedure } from './sessions/take-over-device';
import { watchDeviceProcedure } from './sessions/watch-device';
import { endSessionProcedure } from './sessions/end-session';
import { deleteDeviceProcedure } from '../api/devices/delete-device';
import { listOrganizationDevicesProcedure } from './devices/list-organization-devices';
import { sleepDeviceProcedure } from '../api/devices/sleep-device';
import { wakeDeviceProcedure } from '../api/devices/wake-device';
import { listAuditEventsProcedure } from '../api/audit/list-audit-events';
import { listWaitingOrganizationsProcedure } from './escalations/list-waiting-organizations';
import { getOrganizationProcedure } from './organizations/get-organization';
import { organizationUsageProcedure } from './organizations/organization-usage';
import { updateOrganizationProcedure } from './organizations/update-organization';
import { getTaskProcedure } from './tasks/get-task';
import { listRecentTasksProcedure } from './tasks/list-recent-tasks';
import { answerEscalationProcedure } from './escalations/answer-escalation';
import { listPendingEscalationsProcedure } from './escalations/list-pending-escalations';
import { createApiKeyProcedure } from './keys/create-api-key';
import { listApiKeysProcedure } from './keys/list-api-keys';
import { listScopesProcedure } from './keys/list-scopes';
import { revokeApiKeyProcedure } from './keys/revoke-api-key';
import { createOrganizationProcedure } from './organizations/create-organization';
import { listOrganizationsProcedure } from './organizations/list-organizations';
import { rotateEscalationSecretProcedure } from './organizations/rotate-escalation-secret';
import { getOperatorProcedure } from './sign-in/get-operator';
import { signInProcedure } from './sign-in/sign-in';
import { signOutProcedure } from './sign-in/sign-out';
import { createSpaceProcedure } from './spaces/create-space';
import { deleteCredentialProcedure } from '../api/credentials/delete-credential';
import { listCredentialsProcedure } from '../api/credentials/list-credentials';
import { updateCredentialProcedure } from '../api/credentials/update-credential';

/**
 * The operator console's API, served at /console/api by tRPC's node adapter; each entry
 * is one call of the console's pages (the key is its path). Every change goes through the
 * same domain functions as the admin CLI and the public API, audited the same way.
 */
export const consoleAppRouter = router({
  signIn: signInProcedure,
  signOut: signOutProcedure,
  me: getOperatorProcedure,
  scopes: listScopesProcedure,
  organizations: listOrganizationsProcedure,
  organization: getOrganizationProcedure,
  createOrganization: createOrganizationProcedure,
  updateOrganization: updateOrganizationProcedure,
  organizationUsage: organizationUsageProcedure,
  rotateEscalationSecret: rotateEscalationSecretProcedure,
  createSpace: createSpaceProcedure,
  keys: listApiKeysProcedure,
  createKey: createApiKeyProcedure,
  revokeKey: revokeApiKeyProcedure,
  pendingEscalations: listPendingEscalationsProcedure,
  waitingOrganizations: listWaitingOrganizationsProcedure,
  // The console's escalation page and the answer_url page alike: the caller decides.
  answerEscalation: answerEscalationProcedure,
  escalation: getEscalationProcedure,
  device: getDeviceProcedure,
  // A device's live view, from the console's pages (the operator) and the answer_url page
  // (naming its escalation: the link's access token).
  watchDevice: watchDeviceProcedure,
  takeOverDevice: takeOverDeviceProcedure,
  releaseTakeover: releaseTakeoverProcedure,
  endSession: endSessionProcedure,
  // The answer_url page's own calls: no sign-in; the link's secret, then its access token.
  openAnswerLink: openAnswerLinkProcedure,
  answerLink: getAnswerLinkProcedure,
  organizationDevices: listOrganizationDevicesProcedure,
  // /v1's own operations, called by the operator on the organization the call names (x-svc-org).
  sleepDevice: sleepDeviceProcedure,
  wakeDevice: wakeDeviceProcedure,
  deleteDevice: deleteDeviceProcedure,
  listAuditEvents: listAuditEventsProcedure,
  listCredentials: listCredentialsProcedure,
  updateCredential: updateCredentialProcedure,
  deleteCredential: deleteCredentialProcedure,
  recentTasks: listRecentTasksProcedure,
  task: getTaskProcedure,
});

export type ConsoleAppRouter = typeof consoleAppRouter;
