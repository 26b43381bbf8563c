import { DevicePage } from './device-page';

export const metadata = { title: 'Device · Operator console' };

export default function Page() {
  return <DevicePage />;
}
