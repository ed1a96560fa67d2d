import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { configurationDocPath, configurationMarkdown } from '../../scripts/config-doc.ts';

describe('docs/configuration.md', () => {
  it('is what scripts/config-doc.ts makes of the config schema (run it after changing the schema)', () => {
    expect(readFileSync(configurationDocPath, 'utf8')).toBe(configurationMarkdown());
  });

  it('lists every key of the schema with its default from the code', () => {
    const text = configurationMarkdown();
    expect(text).toContain('| `server.bodyLimitBytes` | integer 1024-536870912 | `10485760` |');
    expect(text).toContain('| `jobs.taskPollMs` | integer 10-600000 | `2000` |');
    expect(text).toContain('| `models[].providers[].capabilities.params` | map of constraint |');
  });
});
