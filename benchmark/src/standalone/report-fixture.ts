import type { ScriptReportHead } from './script-run.ts';

/** The machine and services of the report tests' made-up runs (unit tests only). */
export const FIXTURE_HEAD: Pick<ScriptReportHead, 'machine' | 'services'> = {
  machine: {
    hostname: 'vm',
    cpuModel: 'cpu',
    cores: 2,
    memoryGb: 8,
    kernel: '6',
    loadAverageAtStart: [0, 0, 0],
    node: 'v24',
    versions: {},
  },
  services: { postgres: 'PostgreSQL', redis: 'Redis', s3: 'versitygw' },
};
