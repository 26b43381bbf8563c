import { describe, expect, it } from 'vitest';

describe('runtime', () => {
  it('runs on the Node.js 24 LTS pinned in package.json, not the machine’s Node', () => {
    expect(process.versions.node.split('.')[0]).toBe('24');
  });
});
