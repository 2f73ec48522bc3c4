import { readFile } from 'node:fs/promises';
import { describe, expect, it } from 'vitest';
import {
  CONFIG_DOC_PATH,
  CONFIG_SECTIONS,
  describeVariables,
  renderConfigurationDoc,
} from './gen-config-docs.ts';

describe('docs/configuration.md', () => {
  it('is what the config schemas generate (run `node scripts/gen-config-docs.ts` after changing one)', async () => {
    expect(await readFile(CONFIG_DOC_PATH, 'utf8')).toBe(renderConfigurationDoc());
  });

  it('gives every variable a meaning (`.describe()` on its schema field)', () => {
    const undescribed = CONFIG_SECTIONS.flatMap((section) =>
      describeVariables(section.schema)
        .filter((variable) => !variable.description)
        .map((variable) => `${section.title}: ${variable.name}`),
    );
    expect(undescribed).toEqual([]);
  });

  it('shows a random default as such, not as one sample of it', () => {
    const app = CONFIG_SECTIONS.find((section) => section.title === 'app');
    const instanceId = describeVariables(app?.schema ?? { shape: {} }).find((v) => v.name === 'INSTANCE_ID');
    expect(instanceId?.default).toEqual({ kind: 'dynamic' });
  });
});
