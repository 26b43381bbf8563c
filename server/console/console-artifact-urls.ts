import type { TaskArtifactUrls } from '../domain/console/organization-activity';
import type { StepScreenshotUrls } from '../domain/tasks/task-steps';

/** Mount point of the console's byte routes (console-artifacts.ts) on the service's port. */
export const CONSOLE_ARTIFACTS_PREFIX = '/console/artifacts/';

/** The console's byte routes under the prefix, by path template: console-artifacts.ts serves them, the views' URLs are made from them. */
export const CONSOLE_ARTIFACT_PATHS = { stepScreenshot: 'tasks/{id}/steps/{seq}/screenshot', recording: 'tasks/{id}/recording' } as const;

// Paths, not absolute URLs: the console's pages are served from the same origin, and a
// path stays right behind a proxy whatever OPERATOR_PUBLIC_URL says.
function artifactUrl(template: string, params: Record<string, string>): string {
  return CONSOLE_ARTIFACTS_PREFIX + template.replace(/\{(\w+)\}/g, (_, name: string) => encodeURIComponent(params[name]!));
}

/** A step's screenshot as the console's pages load it (the sign-in cookie, not an API key). */
export const consoleStepScreenshotUrls: StepScreenshotUrls = (taskPublicId, seq) => artifactUrl(CONSOLE_ARTIFACT_PATHS.stepScreenshot, { id: taskPublicId, seq: String(seq) });

/** A task's step screenshots and recording as the console's pages load them. */
export const consoleTaskArtifactUrls: TaskArtifactUrls = { stepScreenshot: consoleStepScreenshotUrls, recording: (taskPublicId) => artifactUrl(CONSOLE_ARTIFACT_PATHS.recording, { id: taskPublicId }) };
