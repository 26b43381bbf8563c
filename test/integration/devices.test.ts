import { deviceCoreSuite } from './devices-core-suite';

deviceCoreSuite('local Chromium', { local: true, env: async () => ({ CHROMIUM_PATH: '/usr/bin/chromium' }) });
