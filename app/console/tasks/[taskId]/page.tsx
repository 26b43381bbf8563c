import { TaskPage } from './task-page';

export const metadata = { title: 'Task · Operator console' };

export default async function Page({ params }: { params: Promise<{ taskId: string }> }) {
  const { taskId } = await params;
  return <TaskPage taskId={taskId} />;
}
