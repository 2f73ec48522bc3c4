import { existsSync, readdirSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { DOCKER_DIR, knownVariables, readText, repoPath } from './support/repo.ts';

/**
 * Static checks of docker/Dockerfile (no Docker engine here to build it): what it copies exists
 * and survives the .dockerignore, what it runs exists, what it sets is known configuration.
 */

interface Instruction {
  stage: string;
  keyword: string;
  args: string;
}

/** Instructions with continuation lines joined and comments dropped, each tagged with its stage. */
function parseDockerfile(text: string): Instruction[] {
  const joined = text
    .split('\n')
    .filter((line) => !line.trimStart().startsWith('#'))
    .join('\n')
    .replace(/\\\n/g, ' ');
  const instructions: Instruction[] = [];
  let stage = '';
  for (const line of joined.split('\n')) {
    const match = /^\s*([A-Z]+)\s+(.*)$/.exec(line);
    if (match === null) continue;
    const [, keyword = '', args = ''] = match;
    if (keyword === 'FROM') stage = /\bAS\s+(\S+)/i.exec(args)?.[1] ?? '';
    instructions.push({ stage, keyword, args: args.trim() });
  }
  return instructions;
}

/** .dockerignore patterns as regular expressions over context-relative paths. */
function ignoreMatchers(text: string): RegExp[] {
  return text
    .split('\n')
    .map((line) => line.trim())
    .filter((line) => line !== '' && !line.startsWith('#'))
    .map((pattern) => {
      const body = pattern
        .replace(/[.+^${}()|[\]]/g, '\\$&')
        .replace(/\*\*\//g, '\uE000')
        .replace(/\*/g, '[^/]*')
        .replace(/\uE000/g, '(?:.*/)?');
      // A pattern that names a directory excludes everything under it.
      return new RegExp(`^${body}(?:/.*)?$`);
    });
}

const dockerfile = parseDockerfile(readText(`${DOCKER_DIR}/Dockerfile`));
const ignored = ignoreMatchers(readText(`${DOCKER_DIR}/Dockerfile.dockerignore`));
const isIgnored = (path: string) => ignored.some((pattern) => pattern.test(path));
const rootPackage = JSON.parse(readText(repoPath('package.json'))) as {
  packageManager: string;
  scripts: Record<string, string>;
};
const stages = dockerfile.filter((i) => i.keyword === 'FROM').map((i) => i.stage);
const execArgs = (args: string) => JSON.parse(args.replace(/^.*?(\[.*\])$/, '$1')) as string[];

function workspacePackageNames(): Set<string> {
  const names = new Set<string>();
  for (const group of ['apps', 'packages']) {
    for (const entry of readdirSync(repoPath(group))) {
      const manifest = repoPath(group, entry, 'package.json');
      if (existsSync(manifest)) names.add((JSON.parse(readText(manifest)) as { name: string }).name);
    }
  }
  return names;
}

/** `pnpm …` invocations in RUN lines, with the command each runs and the packages it filters. */
function pnpmCalls(): { command: string; filters: string[] }[] {
  const withValue = new Set(['--filter', '--filter-prod', '--store-dir']);
  return dockerfile
    .filter((i) => i.keyword === 'RUN')
    .flatMap((i) => i.args.split('&&'))
    .map((part) => part.trim().split(/\s+/))
    .filter((words) => words[0] === 'pnpm')
    .map((words) => {
      const filters: string[] = [];
      let command = '';
      for (let index = 1; index < words.length; index++) {
        const word = words[index] ?? '';
        if (withValue.has(word)) {
          const value = (words[++index] ?? '').replace(/'/g, '');
          if (word.startsWith('--filter')) filters.push(value.replace(/\.\.\.$/, ''));
        } else if (!word.startsWith('-') && command === '') {
          command = word;
        }
      }
      return { command, filters };
    });
}

describe('Dockerfile', () => {
  it('copies only paths that exist and that the .dockerignore keeps', () => {
    const copies = dockerfile.filter((i) => i.keyword === 'COPY' && !i.args.includes('--from='));
    expect(copies.length).toBeGreaterThan(0);
    for (const copy of copies) {
      const sources = copy.args.split(/\s+/).slice(0, -1);
      for (const source of sources) {
        expect(existsSync(repoPath(source)), `COPY ${source}`).toBe(true);
        if (source !== '.')
          expect(isIgnored(source), `${source} is excluded by the .dockerignore`).toBe(false);
      }
    }
  });

  it('copies between stages that exist, and ends with the app and worker targets', () => {
    for (const copy of dockerfile.filter((i) => i.args.includes('--from='))) {
      const from = /--from=(\S+)/.exec(copy.args)?.[1] ?? '';
      expect(stages.slice(0, stages.indexOf(copy.stage))).toContain(from);
    }
    expect(stages).toContain('worker');
    expect(stages.at(-1)).toBe('app');
  });

  it('runs pnpm commands that exist, on workspace packages that exist', () => {
    const builtIn = new Set(['fetch', 'install']);
    const names = workspacePackageNames();
    const calls = pnpmCalls();
    expect(calls.map((c) => c.command)).toEqual(['fetch', 'install', 'build', 'install']);
    for (const { command, filters } of calls) {
      if (!builtIn.has(command)) expect(rootPackage.scripts, `pnpm ${command}`).toHaveProperty([command]);
      for (const filter of filters) expect(names, `--filter ${filter}`).toContain(filter);
    }
    // The build script's entry file is in the context too.
    const buildEntry = /node (\S+)/.exec(rootPackage.scripts.build ?? '')?.[1];
    expect(buildEntry && existsSync(repoPath(buildEntry)) && !isIgnored(buildEntry)).toBe(true);
  });

  it('gets pnpm through corepack, at the version package.json pins', () => {
    expect(rootPackage.packageManager).toMatch(/^pnpm@\d+\.\d+\.\d+/);
    const runs = dockerfile.filter((i) => i.keyword === 'RUN').map((i) => i.args);
    expect(runs).toContain('corepack enable pnpm');
    expect(runs.some((r) => r.includes('--frozen-lockfile'))).toBe(true);
    const from = dockerfile.find((i) => i.keyword === 'ARG' && i.args.startsWith('NODE_IMAGE='));
    expect(from?.args).toMatch(/^NODE_IMAGE=node:24[.\w-]*slim$/);
  });

  it('starts entry files that exist and survive the .dockerignore', () => {
    const entries = dockerfile
      .filter((i) => i.keyword === 'CMD' || i.keyword === 'HEALTHCHECK')
      .map((i) => execArgs(i.args))
      .map((args) => args[1] ?? '');
    expect(entries.sort()).toEqual([
      'apps/app/src/main.ts',
      'apps/worker/src/main.ts',
      'docker/healthcheck.ts',
    ]);
    for (const entry of [...entries, 'apps/app/src/cli/mint-worker-token.ts', 'apps/app/migrations']) {
      expect(existsSync(repoPath(entry)), entry).toBe(true);
      expect(isIgnored(entry), `${entry} is excluded by the .dockerignore`).toBe(false);
    }
  });

  it('keeps local state, dependencies and secrets out of the build context', () => {
    for (const path of [
      'node_modules',
      'apps/app/node_modules',
      '.data',
      'apps/engine/dist',
      'docker/.env',
      '.git',
    ])
      expect(isIgnored(path), path).toBe(true);
    expect(isIgnored('docker/k8s/base/secrets/app.env')).toBe(true);
    expect(isIgnored('docker/k8s/base/secrets/app.env.example')).toBe(false);
  });

  it('runs as the unprivileged node user, with only known configuration set', () => {
    const users = dockerfile.filter((i) => i.keyword === 'USER');
    // Root only in the runtime stage, to install bubblewrap and the code; node from then on.
    expect(users.map((u) => [u.stage, u.args])).toEqual([['runtime', 'node']]);
    const runtimeInstructions = dockerfile.filter((i) => i.stage === 'runtime').map((i) => i.keyword);
    expect(runtimeInstructions.at(-1)).toBe('USER');
    expect(stages.indexOf('runtime')).toBeLessThan(stages.indexOf('worker'));
    const toolVariables = new Set(['COREPACK_ENABLE_DOWNLOAD_PROMPT', 'NODE_ENV']);
    for (const env of dockerfile.filter((i) => i.keyword === 'ENV')) {
      const name = env.args.split('=')[0] ?? '';
      const known =
        env.stage === 'app'
          ? knownVariables('app')
          : env.stage === 'worker'
            ? knownVariables('worker')
            : toolVariables;
      expect(known, `ENV ${name} in stage ${env.stage}`).toContain(name);
    }
  });
});
