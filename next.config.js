/** @type {import('next').NextConfig} */
const nextConfig = {
  // The node server (server/main.ts) owns the port; Next only renders the console pages.
  poweredByHeader: false,
  reactStrictMode: true,
  // Server code under server/ is not part of the Next build.
  typescript: { tsconfigPath: 'tsconfig.json' },
};

export default nextConfig;
