import type { ApiErrorCode } from '../core/errors';

/**
 * The errors a route's domain can answer beyond the ones the OpenAPI document derives from
 * the route itself (openapi.ts: authentication, rate limit, scope and entitlement from the
 * procedure's access meta; 400 for input; 404 `<resource>_not_found` from the path; 413/415
 * for bodies; 400 `invalid_cursor` for lists). Keyed by the router's procedure name; a
 * route missing here gets only the derived errors. `idempotency_conflict` also declares the
 * `Idempotency-Key` request header.
 */
export const routeErrors: Record<string, readonly ApiErrorCode[]> = {
  createDevice: ['device_quota_exceeded', 'duration_quota_exceeded', 'idempotency_conflict', 'device_terminated', 'capacity_exhausted'],
  sleepDevice: ['device_busy', 'device_not_ready', 'device_terminated'],
  wakeDevice: ['device_not_ready', 'device_terminated', 'device_quota_exceeded', 'duration_quota_exceeded', 'capacity_exhausted'],
  deleteDevice: ['device_terminated'],
  submitTask: ['device_busy', 'device_not_ready', 'device_terminated', 'idempotency_conflict'],
  cancelTask: ['task_not_cancelable'],
  createSession: ['device_not_ready', 'device_terminated'],
  takeOver: ['session_expired', 'session_not_control', 'no_running_task', 'device_terminated', 'device_busy'],
  release: ['session_expired', 'no_running_task'],
  revokeSession: ['session_expired'],
  createCdpSession: ['device_busy', 'device_not_ready', 'device_terminated'],
  deleteCdpSession: ['session_expired'],
  createWebhookEndpoint: ['unknown_event_type'],
  updateWebhookEndpoint: ['unknown_event_type'],
  createCredential: ['credential_name_taken'],
  updateCredential: ['credential_name_taken'],
};
