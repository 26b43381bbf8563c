'use client';

import { BarChart } from '@mantine/charts';
import { Button, Group, SimpleGrid, Stack, Text } from '@mantine/core';
import { ErrorAlert } from '../../../components/error-alert';
import { Loading } from '../../../components/page-state';
import { SectionCard } from '../../../components/section-card';
import { consoleApi, type HourlyUsage } from '../../console-client';
import { useConsoleQuery } from '../../use-console-query';

const hourLabel = (iso: string) => `${iso.slice(11, 13)}:00`;

/** The organization's last 24 hours, hour by hour (UTC): device time, tasks and steps, with the totals. */
export function UsageChart({ orgId }: { orgId: string }) {
  const usage = useConsoleQuery(() => consoleApi.organizationUsage.query({ org_id: orgId }), [orgId]);
  return (
    <SectionCard
      title="Usage, last 24 hours"
      description="Hour by hour, UTC. Device time counts while a device is active."
      actions={
        <Button variant="default" size="xs" onClick={usage.reload} loading={usage.loading && usage.data !== undefined}>
          Refresh
        </Button>
      }
    >
      {usage.error !== null && <ErrorAlert message={usage.error} onRetry={usage.reload} />}
      {usage.data === undefined && usage.error === null && <Loading label="Loading usage…" />}
      {usage.data !== undefined && <Charts hours={usage.data} />}
    </SectionCard>
  );
}

function Charts({ hours }: { hours: HourlyUsage }) {
  const data = hours.map((hour) => ({ hour: hourLabel(hour.hour), 'Device minutes': Math.round((hour.device_seconds / 60) * 10) / 10, Tasks: hour.tasks, Steps: hour.steps }));
  const totals = hours.reduce((sum, hour) => ({ seconds: sum.seconds + hour.device_seconds, tasks: sum.tasks + hour.tasks, steps: sum.steps + hour.steps }), { seconds: 0, tasks: 0, steps: 0 });
  return (
    <Stack gap="sm">
      <Group gap="xl" data-testid="usage-totals">
        <Total label="Device time" value={`${Math.round(totals.seconds / 60).toLocaleString('en')} min`} />
        <Total label="Tasks" value={totals.tasks.toLocaleString('en')} />
        <Total label="Steps" value={totals.steps.toLocaleString('en')} />
      </Group>
      <SimpleGrid cols={2} spacing="lg">
        <figure style={{ margin: 0 }} aria-label={`Device minutes per hour over the last 24 hours, ${Math.round(totals.seconds / 60)} in all`}>
          <Text size="xs" fw={600} c="dimmed" mb={4} component="figcaption">
            Device minutes per hour
          </Text>
          <BarChart h={180} data={data} dataKey="hour" series={[{ name: 'Device minutes', color: 'indigo.6' }]} tickLine="y" gridAxis="y" xAxisProps={{ interval: 3 }} />
        </figure>
        <figure style={{ margin: 0 }} aria-label={`Tasks and steps per hour over the last 24 hours: ${totals.tasks} tasks, ${totals.steps} steps`}>
          <Text size="xs" fw={600} c="dimmed" mb={4} component="figcaption">
            Tasks and steps per hour
          </Text>
          <BarChart
            h={180}
            data={data}
            dataKey="hour"
            series={[
              { name: 'Tasks', color: 'teal.6' },
              { name: 'Steps', color: 'gray.5' },
            ]}
            tickLine="y"
            gridAxis="y"
            xAxisProps={{ interval: 3 }}
          />
        </figure>
      </SimpleGrid>
    </Stack>
  );
}

function Total({ label, value }: { label: string; value: string }) {
  return (
    <div>
      <Text size="xs" c="dimmed" tt="uppercase" fw={600}>
        {label}
      </Text>
      <Text size="xl" fw={700}>
        {value}
      </Text>
    </div>
  );
}
