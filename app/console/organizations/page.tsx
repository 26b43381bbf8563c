import { OrganizationsList } from './organizations-list';

export const metadata = { title: 'Organizations · Operator console' };

export default function OrganizationsPage() {
  return <OrganizationsList />;
}
