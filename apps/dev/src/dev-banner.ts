/** What `pnpm dev` prints once its stack is up: how to reach it with curl, the CLI and a browser. */
export function devBanner(options: {
  url: string;
  apiKey: string;
  apps: number;
  workers: number;
  embedded: readonly string[];
  dataDir: string;
  benchmarkFlowId: string;
  inspectorPath: string;
}): string {
  const { url, apiKey } = options;
  return [
    '',
    `flowbox is up: ${options.apps} app(s), ${options.workers} worker(s); embedded: ${options.embedded.join(', ') || 'none'}; data in ${options.dataDir}`,
    'Try the benchmark flow:',
    '',
    `  curl -i -X POST ${url}/v1/webhooks/${options.benchmarkFlowId}/sync -H 'content-type: application/json' -d '{}'`,
    '',
    'Then read the run (its steps, timings and a link to its log):',
    '',
    `  curl -H 'authorization: Bearer ${apiKey}' ${url}/v1/runs/<x-flowbox-run-id from the response>`,
    '',
    'The flowbox CLI (pnpm flowbox, or packages/cli/bin/flowbox) talks to this stack, from any shell, after:',
    '',
    `  export FLOWBOX_URL=${shellWord(url)}`,
    `  export FLOWBOX_API_KEY=${shellWord(apiKey)}`,
    '',
    'Or watch runs, their waterfalls and flows in the run inspector (it asks for the API key above):',
    '',
    `  ${url}${options.inspectorPath}`,
    '',
  ].join('\n');
}

/** The value as one shell word: bare when it has nothing a shell would read, else single-quoted. */
export function shellWord(value: string): string {
  return /^[\w@%+=:,./-]+$/.test(value) ? value : `'${value.replaceAll("'", `'\\''`)}'`;
}
