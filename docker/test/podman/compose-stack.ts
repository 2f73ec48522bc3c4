import { fileURLToPath } from 'node:url';
import { podman, run } from './podman.ts';

const COMPOSE_FILE = fileURLToPath(new URL('../../docker-compose.yml', import.meta.url));

export interface ContainerState {
  name: string;
  id: string;
  running: boolean;
  exitCode: number;
  health: string;
}

/**
 * The project's compose file run by podman-compose under one project name, with the variables
 * a user would put in docker/.env given as the environment. podman-compose 1.0.3 does not wait
 * on `depends_on` conditions and podman runs health checks only when asked (no systemd timers
 * here), so the caller starts services in order and `waitHealthy` runs the checks itself.
 */
export class ComposeStack {
  readonly project: string;
  readonly env: Record<string, string>;
  /** docker-compose.yml, then any override files given after it (`-f a -f b`). */
  readonly files: string[];

  constructor(project: string, env: Record<string, string>, overrides: string[] = []) {
    this.project = project;
    this.env = env;
    this.files = [COMPOSE_FILE, ...overrides];
  }

  /** The same project with `file` (relative to docker/) given after the files it has. */
  withOverride(file: string): ComposeStack {
    const path = fileURLToPath(new URL(`../../${file}`, import.meta.url));
    return new ComposeStack(this.project, this.env, [...this.files.slice(1), path]);
  }

  compose(args: string[], env: Record<string, string> = {}) {
    const files = this.files.flatMap((file) => ['-f', file]);
    return run('podman-compose', ['-p', this.project, ...files, ...args], {
      env: { ...this.env, ...env },
    });
  }

  /** Starts these services without building and without their dependencies. */
  async up(services: string[], env: Record<string, string> = {}): Promise<void> {
    await this.compose(['up', '-d', '--no-build', '--no-deps', ...services], env);
  }

  async containers(service?: string): Promise<ContainerState[]> {
    const filters = ['--filter', `label=io.podman.compose.project=${this.project}`];
    if (service !== undefined) filters.push('--filter', `label=com.docker.compose.service=${service}`);
    const { output } = await podman(['ps', '-a', ...filters, '--format', '{{.Names}}']);
    const names = output.split('\n').filter((line) => line.trim() !== '');
    return Promise.all(names.map((name) => inspect(name)));
  }

  async container(service: string): Promise<ContainerState> {
    const [first] = await this.containers(service);
    if (first === undefined) throw new Error(`no ${service} container in ${this.project}`);
    return first;
  }

  /** Runs the container's own health check until it passes (podman schedules none here). */
  async waitHealthy(service: string, timeoutMs: number): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    for (const container of await this.containers(service)) {
      let last = '';
      for (;;) {
        const check = await podman(['healthcheck', 'run', container.name], { allowFailure: true });
        if (check.exitCode === 0) break;
        last = check.output.trim();
        if (Date.now() > deadline) {
          throw new Error(
            `${container.name} not healthy after ${timeoutMs} ms: ${last}\n${await this.logs(container.name)}`,
          );
        }
        await sleep(1_000);
      }
    }
  }

  async logs(name: string): Promise<string> {
    const { output } = await podman(['logs', '--tail', '40', name], { allowFailure: true });
    return output;
  }

  /** Stops and removes every container, the network and the volumes of the project. */
  async down(): Promise<void> {
    await this.compose(['down', '-v'], {}).catch(() => undefined);
    // podman-compose's down removes what the file lists; containers of scaled replicas and
    // leftovers of an interrupted run are removed by label.
    const filter = `label=io.podman.compose.project=${this.project}`;
    const { output } = await podman(['ps', '-aq', '--filter', filter]);
    const ids = output.split('\n').filter((id) => id !== '');
    if (ids.length > 0) await podman(['rm', '-f', '-t', '1', ...ids]);
    const volumes = (await podman(['volume', 'ls', '-q', '--filter', filter])).output
      .split('\n')
      .filter(Boolean);
    if (volumes.length > 0) await podman(['volume', 'rm', '-f', ...volumes]);
    await podman(['network', 'rm', '-f', `${this.project}_default`], { allowFailure: true });
  }

  /** What of the project is left: containers, volumes, networks (empty after `down`). */
  async leftovers(): Promise<string[]> {
    const filter = `label=io.podman.compose.project=${this.project}`;
    const containers = (await podman(['ps', '-aq', '--filter', filter])).output.split('\n').filter(Boolean);
    const volumes = (await podman(['volume', 'ls', '-q', '--filter', filter])).output
      .split('\n')
      .filter(Boolean);
    const networks = (await podman(['network', 'ls', '-q', '--filter', filter])).output
      .split('\n')
      .filter(Boolean);
    return [
      ...containers.map((id) => `container ${id}`),
      ...volumes.map((v) => `volume ${v}`),
      ...networks.map((n) => `network ${n}`),
    ];
  }
}

export async function inspect(name: string): Promise<ContainerState> {
  const format = '{{.Name}}|{{.Id}}|{{.State.Running}}|{{.State.ExitCode}}|{{.State.Health.Status}}';
  const { output } = await podman(['inspect', '--format', format, name]);
  const [containerName = name, id = '', running = '', exitCode = '0', health = ''] = output.trim().split('|');
  return { name: containerName, id, running: running === 'true', exitCode: Number(exitCode), health };
}

export const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
