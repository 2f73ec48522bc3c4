import { CONNECTIONS_ROOT, type FlowDefinition, OTHERWISE, walkSteps } from '@flowbox/protocol';

/** The bounds a flow's tree is held to at publish (FLOW_MAX_DEPTH, FLOW_MAX_STEPS, FLOW_TIMEOUT_SECONDS). */
export interface FlowLimits {
  /** Deepest nesting of routers and loops: a loop in a router's branch is 2. */
  maxDepth: number;
  /** Most steps across the whole tree, routers and loops included. */
  maxSteps: number;
  /** The flow's timeout: no step's `timeoutMs` may pass it. */
  flowTimeoutMs: number;
  /** POLL_MIN_INTERVAL_SECONDS: a polling trigger's shortest `intervalSeconds` (default 60). */
  pollMinIntervalSeconds?: number;
  /** RUN_MAX_PAUSE_DAYS: no delay or wait written in the flow may be longer. Unset: not checked. */
  maxPauseMs?: number;
}

/**
 * How deep routers and loops nest in a definition not yet parsed, walked without recursion, so
 * a definition nested thousands deep is refused before the schema's recursive parse meets it.
 * Returns the JSON path of the first body past `maxDepth`, or null.
 */
export function rawNestingProblem(raw: unknown, maxDepth: number): string | null {
  const pending: { value: unknown; at: string; depth: number }[] = [];
  const pushBody = (value: unknown, at: string, depth: number) => {
    if (!Array.isArray(value)) return;
    value.forEach((step, index) => {
      pending.push({ value: step, at: `${at}.${index}`, depth });
    });
  };
  if (isObject(raw)) pushBody(raw.steps, 'definition.steps', 0);
  for (let next = pending.pop(); next !== undefined; next = pending.pop()) {
    const { value, at, depth } = next;
    if (!isObject(value) || (value.type !== 'router' && value.type !== 'loop')) continue;
    if (depth + 1 > maxDepth) return depthProblem(at, maxDepth);
    if (value.type === 'loop') pushBody(value.steps, `${at}.steps`, depth + 1);
    else {
      if (Array.isArray(value.branches)) {
        value.branches.forEach((branch, b) => {
          if (isObject(branch)) pushBody(branch.steps, `${at}.branches.${b}.steps`, depth + 1);
        });
      }
      pushBody(value.otherwise, `${at}.otherwise`, depth + 1);
    }
  }
  return null;
}

function depthProblem(at: string, maxDepth: number): string {
  return `${at}: routers and loops nest past FLOW_MAX_DEPTH (${maxDepth}) here`;
}

/**
 * The tree's own rules: step names unique across the flow (and not `trigger` or
 * `connections`), branch names unique within their router (and not `otherwise`, its fallback's
 * name in step paths), the size within FLOW_MAX_STEPS (nesting is rawNestingProblem's), a loop's `items` something that can
 * be an array, and no `timeoutMs` past the flow's. The first problem found, or null.
 */
export function treeProblem(definition: FlowDefinition, limits: FlowLimits): string | null {
  const visits = walkSteps(definition);
  if (visits.length > limits.maxSteps) {
    return `definition.steps: the flow has ${visits.length} steps counting its branches and loop bodies; at most FLOW_MAX_STEPS (${limits.maxSteps})`;
  }
  const paths = new Map<string, string>();
  for (const { step, at, path } of visits) {
    if (step.name === CONNECTIONS_ROOT) {
      return `${at}.name: '${CONNECTIONS_ROOT}' is reserved for {{connections.<name>}} templates`;
    }
    if (step.name === 'trigger') return `${at}.name: 'trigger' is already used by the trigger`;
    const other = paths.get(step.name);
    if (other !== undefined) {
      return `${at}.name: '${step.name}' is already used by step ${other}; step names are unique across the flow`;
    }
    paths.set(step.name, path);
    if (step.type === 'router') {
      if (step.parallel === true && step.mode !== 'all') {
        return `${at}.parallel: only a router with mode 'all' runs its branches at once`;
      }
      const branches = new Set<string>();
      for (const [b, branch] of step.branches.entries()) {
        if (branch.name === OTHERWISE) {
          return `${at}.branches.${b}.name: '${OTHERWISE}' names the router's fallback; use the router's 'otherwise' field`;
        }
        if (branches.has(branch.name)) {
          return `${at}.branches.${b}.name: router '${step.name}' already has a branch '${branch.name}'`;
        }
        branches.add(branch.name);
      }
    } else if (step.type === 'loop' && typeof step.items === 'string' && !ONE_TEMPLATE.test(step.items)) {
      return `${at}.items: '${step.items}' is text, never an array: write one template ({{trigger.body.items}}) or an array`;
    } else if ((step.type === 'piece' || step.type === 'code') && step.timeoutMs !== undefined) {
      if (step.timeoutMs > limits.flowTimeoutMs) {
        return `${at}.timeoutMs: ${step.timeoutMs} is past the flow's timeout (FLOW_TIMEOUT_SECONDS: ${limits.flowTimeoutMs} ms)`;
      }
    }
  }
  return null;
}

/** A string that is one template and nothing else: it yields the value with its own type. */
const ONE_TEMPLATE = /^\{\{[^{}]*\}\}$/;

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
