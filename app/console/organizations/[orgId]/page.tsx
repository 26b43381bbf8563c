import { OrganizationPage } from './organization-page';

export const metadata = { title: 'Organization · Operator console' };

export default async function Page({ params }: { params: Promise<{ orgId: string }> }) {
  const { orgId } = await params;
  return <OrganizationPage orgId={orgId} />;
}
