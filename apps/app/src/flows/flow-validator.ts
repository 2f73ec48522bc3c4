import { Script } from 'node:vm';
import {
  CODE_STEP_FILENAME,
  CODE_STEP_LINE_OFFSET,
  CONNECTIONS_ROOT,
  codeStepLines,
  codeStepPosition,
  describeCodeStepPosition,
  FlowboxError,
  type FlowDefinition,
  FlowDefinitionSchema,
  findTemplateReferences,
  formatIssues,
  type PieceStepDefinition,
  walkSteps,
  wrapCodeStep,
} from '@flowbox/protocol';
import type { PieceIndex } from '../pieces/piece-registry.ts';
import type { PieceRecord } from '../pieces/pieces-repository.ts';
import { parsePollSpec } from '../polls/poll-spec.ts';
import { conditionProblems } from './condition-check.ts';
import { durableStepProblem } from './durable-step-check.ts';
import { checkErrorResponse } from './error-response-check.ts';
import { type FlowLimits, rawNestingProblem, treeProblem } from './flow-tree-check.ts';
import { checkPieceInputs } from './piece-input-check.ts';
import { literalResponseProblem, RESPONSE_STEP } from './response-step-check.ts';
import { templatedFields, templateScopeProblems } from './template-scope.ts';

/**
 * Checks a flow definition before it is stored: its shape and its tree (flow-tree-check.ts:
 * unique names, nesting, size), that every piece version, action and trigger is published in the
 * registry (`pieces`: a snapshot of it), that a piece step's `connection` fits the credential
 * its action declares, that templates are ones the engine resolves and name only what ran before
 * them (template-scope.ts), that routers' conditions can hold (condition-check.ts), and that code
 * steps compile, wherever they sit. Errors point at the field, e.g.
 * `definition.steps.0.branches.1.steps.2.code: SyntaxError: ... (line 2, column 11)`.
 */
export function validateFlowDefinition(raw: unknown, pieces: PieceIndex, limits: FlowLimits): FlowDefinition {
  const nesting = typeof raw === 'object' && raw !== null ? rawNestingProblem(raw, limits.maxDepth) : null;
  if (nesting !== null) throw invalid(nesting);
  const parsed = FlowDefinitionSchema.safeParse(raw);
  if (!parsed.success) throw invalid(formatIssues(parsed.error.issues.map(prefixIssue)));
  const definition = parsed.data;
  checkErrorResponse(definition);

  const pinned = new Map<string, string>();
  const trigger = resolvePiece(pieces, definition.trigger, 'definition.trigger', pinned);
  if (!trigger.manifest.triggers.includes(definition.trigger.trigger)) {
    throw invalid(
      `definition.trigger.trigger: piece '${trigger.manifest.name}' has no trigger '${definition.trigger.trigger}'`,
    );
  }
  if (trigger.manifest.polling?.includes(definition.trigger.trigger) === true) {
    parsePollSpec(definition.trigger.input, { minIntervalSeconds: limits.pollMinIntervalSeconds ?? 60 });
  }
  const tree = treeProblem(definition, limits);
  if (tree !== null) throw invalid(tree);

  for (const { step, at } of walkSteps(definition)) {
    if (step.type === 'piece') {
      const piece = resolvePiece(pieces, step, at, pinned);
      if (!piece.manifest.actions.includes(step.action)) {
        throw invalid(`${at}.action: piece '${step.piece}' has no action '${step.action}'`);
      }
      const problem = connectionProblem(step, piece);
      if (problem !== null) throw invalid(`${at}.connection: ${problem}`);
      if (step.piece === RESPONSE_STEP.piece && step.action === RESPONSE_STEP.action) {
        const problem = literalResponseProblem(step.input, at);
        if (problem !== null) throw invalid(problem);
      }
    } else if (step.type === 'code') {
      checkCompiles(step.code, `${at}.code`);
    } else if (step.type === 'router') {
      const [problem] = conditionProblems(step, at);
      if (problem !== undefined) throw invalid(problem);
    }
    const waiting = durableStepProblem(step, at, limits.maxPauseMs ?? Number.POSITIVE_INFINITY);
    if (waiting !== null) throw invalid(waiting);
    for (const { field, value } of templatedFields(step)) {
      for (const reference of findTemplateReferences(value)) {
        const where = reference.path === '' ? `${at}.${field}` : `${at}.${field}.${reference.path}`;
        if (reference.problem !== undefined) {
          throw invalid(`${where}: template {{${reference.expression}}}: ${reference.problem}`);
        }
        if (reference.root === CONNECTIONS_ROOT && !CONNECTION_REFERENCE.test(reference.segments.join('.'))) {
          throw invalid(
            `${where}: template {{${reference.expression}}} must name a connection: {{connections.<name>}}`,
          );
        }
      }
    }
  }
  const [outOfScope] = templateScopeProblems(definition);
  if (outOfScope !== undefined) throw invalid(outOfScope);
  checkPieceInputs(definition, pieces);
  return definition;
}

/**
 * The published version a trigger or step names (its `version`, else the latest). One flow
 * uses one version of a piece: the engine holds one per name in a run.
 */
function resolvePiece(
  pieces: PieceIndex,
  ref: { piece: string; version?: string | undefined },
  at: string,
  pinned: Map<string, string>,
): PieceRecord {
  const piece = pieces.resolve(ref.piece, ref.version);
  if (piece === undefined) {
    const published = pieces.versions(ref.piece);
    if (ref.version !== undefined && pieces.isYanked(ref.piece, ref.version)) {
      throw invalid(
        `${at}.version: ${ref.piece}@${ref.version} is yanked; flows pinned to it keep running it, new versions cannot pin it (published: ${published.join(', ') || 'none'})`,
      );
    }
    if (published.length === 0) throw invalid(`${at}.piece: unknown piece '${ref.piece}'`);
    throw invalid(
      `${at}.version: piece '${ref.piece}' has no published version '${ref.version}' (published: ${published.join(', ')})`,
    );
  }
  const other = pinned.get(piece.name);
  if (other !== undefined && other !== piece.version) {
    throw invalid(
      `${at}.version: the flow already uses ${piece.name}@${other}; one flow uses one version of a piece`,
    );
  }
  pinned.set(piece.name, piece.version);
  return piece;
}

/**
 * Whether a piece step's `connection` fits the credential its action declares: named when it is
 * required, absent when it declares none. (That the connection exists is checked at publish.)
 * A version recorded before the registry read actions has no declarations to check against.
 */
function connectionProblem(step: PieceStepDefinition, piece: PieceRecord): string | null {
  if (piece.actions === null) return null;
  const auth = piece.actions.find((action) => action.name === step.action)?.auth;
  const ref = `${piece.name}@${piece.version} ${step.action}`;
  if (step.connection !== undefined && auth === undefined) {
    return `${ref} declares no auth, so it takes no connection; pass a secret as an input template {{connections.${step.connection}}}`;
  }
  if (step.connection === undefined && auth?.required === true) {
    return `${ref} needs a connection (${auth.displayName}, ${auth.type}): name one as "connection"`;
  }
  return null;
}

const CONNECTION_REFERENCE = /^connections\.[a-z][a-z0-9_]{0,63}(\.[^.]+)*$/;

function checkCompiles(code: string, at: string): void {
  try {
    // Compiles without running: vm.Script parses the wrapped function expression only.
    new Script(wrapCodeStep(code), { filename: CODE_STEP_FILENAME, lineOffset: CODE_STEP_LINE_OFFSET });
  } catch (error) {
    const message = error instanceof Error ? `${error.name}: ${error.message}` : String(error);
    const position = codeStepPosition(error, codeStepLines(code));
    const where = position === undefined ? '' : ` (${describeCodeStepPosition(position)})`;
    throw invalid(`${at}: does not compile: ${message}${where}`);
  }
}

function prefixIssue<T extends { path: PropertyKey[] }>(issue: T): T {
  return { ...issue, path: ['definition', ...issue.path] };
}

function invalid(message: string): FlowboxError {
  return new FlowboxError('INVALID_FLOW', message);
}
