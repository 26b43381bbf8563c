import { router } from '../trpc/init';
import { listAuditEventsProcedure } from '../api/audit';
import { deleteCredentialProcedure, listCredentialsProcedure, updateCredentialProcedure } from '../api/credentials';
import { deleteDeviceProcedure, sleepDeviceProcedure, wakeDeviceProcedure } from '../api/devices';
import { getAnswerLinkProcedure, openAnswerLinkProcedure } from './answer-links';
import { getDeviceProcedure, listOrganizationDevicesProcedure } from './devices';
import { answerEscalationProcedure, getEscalationProcedure, listPendingEscalationsProcedure, listWaitingOrganizationsProcedure } from './escalations';
import { createApiKeyProcedure, listApiKeysProcedure, listScopesProcedure, revokeApiKeyProcedure } from './keys';
import { createOrganizationProcedure, getOrganizationProcedure, listOrganizationsProcedure, organizationUsageProcedure, rotateEscalationSecretProcedure, updateOrganizationProcedure } from './organizations';
import { endSessionProcedure, releaseTakeoverProcedure, takeOverDeviceProcedure, watchDeviceProcedure } from './sessions';
import { getOperatorProcedure, signInProcedure, signOutProcedure } from './sign-in';
import { createSpaceProcedure } from './spaces';
import { getTaskProcedure, listRecentTasksProcedure } from './tasks';

/**
 * The operator console's API, served at /console/api by tRPC's node adapter; each entry
 * is one call of the console's pages (the key is its path), declared in the file of its
 * resource (organizations.ts, keys.ts, ...). Every change goes through the
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
