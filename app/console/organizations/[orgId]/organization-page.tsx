'use client';

import { Anchor, Badge, Breadcrumbs, Button, Group, Stack, Tabs, Text } from '@mantine/core';
import Link from 'next/link';
import { useEffect, useState } from 'react';
import { ErrorAlert } from '../../../components/error-alert';
import { Loading, PageHeader } from '../../../components/page-state';
import { consoleApi } from '../../console-client';
import { useConsoleQuery } from '../../use-console-query';
import { ApiKeys } from './api-keys';
import { AuditLog } from './audit-log';
import { CredentialsTable } from './credentials-table';
import { DevicesTable } from './devices-table';
import { OrganizationSettings } from './organization-settings';
import { RecentTasks } from './recent-tasks';
import { SpacesCard } from './spaces-card';
import { UsageChart } from './usage-chart';

const TABS = ['overview', 'devices', 'tasks', 'keys', 'credentials', 'audit'] as const;
type Tab = (typeof TABS)[number];

/** One organization: overview (usage, settings, Spaces), devices, tasks, API keys, credentials and audit log, one tab each (`#devices` opens that tab). */
export function OrganizationPage({ orgId }: { orgId: string }) {
  const organization = useConsoleQuery(() => consoleApi.organization.query({ org_id: orgId }), [orgId]);
  const [tab, setTab] = useState<Tab>('overview');
  useEffect(() => {
    const fromHash = window.location.hash.slice(1);
    if ((TABS as readonly string[]).includes(fromHash)) setTab(fromHash as Tab);
  }, []);
  const choose = (value: string | null) => {
    const next = (TABS as readonly string[]).includes(value ?? '') ? (value as Tab) : 'overview';
    setTab(next);
    window.history.replaceState(null, '', next === 'overview' ? window.location.pathname : `#${next}`);
  };

  const crumbs = (
    <Breadcrumbs mb="xs">
      <Anchor component={Link} href="/console/organizations" size="sm">
        Organizations
      </Anchor>
      <Text size="sm">{organization.data?.name ?? '…'}</Text>
    </Breadcrumbs>
  );
  if (organization.data === undefined) {
    return (
      <>
        {crumbs}
        {organization.error !== null ? <ErrorAlert message={organization.error} onRetry={organization.reload} /> : <Loading label="Loading the organization…" />}
      </>
    );
  }
  const org = organization.data;

  return (
    <>
      {crumbs}
      <PageHeader
        title={
          <Group gap="sm" component="span">
            {org.name}
            {!org.entitled && (
              <Badge color="gray" variant="outline">
                not entitled
              </Badge>
            )}
          </Group>
        }
        description={
          <Text span ff="monospace" size="xs">
            {org.id}
          </Text>
        }
        actions={
          <Button component={Link} href={`/console?org=${org.id}`} variant="default">
            Waiting escalations
          </Button>
        }
      />
      <Tabs value={tab} onChange={choose} keepMounted={false}>
        <Tabs.List mb="md">
          <Tabs.Tab value="overview">Overview</Tabs.Tab>
          <Tabs.Tab value="devices">Devices</Tabs.Tab>
          <Tabs.Tab value="tasks">Tasks</Tabs.Tab>
          <Tabs.Tab value="keys">API keys</Tabs.Tab>
          <Tabs.Tab value="credentials">Credentials</Tabs.Tab>
          <Tabs.Tab value="audit">Audit log</Tabs.Tab>
        </Tabs.List>
        <Tabs.Panel value="overview">
          <Stack gap="md">
            <UsageChart orgId={org.id} />
            <Group align="stretch" grow wrap="nowrap" gap="md">
              <OrganizationSettings organization={org} onSaved={organization.reload} />
              <SpacesCard organization={org} onAdded={organization.reload} />
            </Group>
          </Stack>
        </Tabs.Panel>
        <Tabs.Panel value="devices">
          <DevicesTable orgId={org.id} />
        </Tabs.Panel>
        <Tabs.Panel value="tasks">
          <RecentTasks orgId={org.id} />
        </Tabs.Panel>
        <Tabs.Panel value="keys">
          <ApiKeys organization={org} />
        </Tabs.Panel>
        <Tabs.Panel value="credentials">
          <CredentialsTable organization={org} />
        </Tabs.Panel>
        <Tabs.Panel value="audit">
          <AuditLog orgId={org.id} />
        </Tabs.Panel>
      </Tabs>
    </>
  );
}
