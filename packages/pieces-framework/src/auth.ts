/**
 * The credential a piece's actions need, declared as data: the step names a connection
 * (`"connection": "crm"`), the engine checks the connection's value against the declaration's
 * JSON Schema and hands it to `run` as `ctx.auth`, typed here. It is never a step input, so it is
 * never templated into one, and it is redacted wherever the run is shown, as connections are.
 */
import { inputSchemaOf, type JsonSchema, type Props, type PropsValue } from './property.ts';

const AUTH = Symbol.for('flowbox.pieces-framework.auth');

/** `SECRET_TEXT`: one string (a token); `BASIC_AUTH`: a username and password; `CUSTOM_AUTH`: fields. */
export type PieceAuthType = 'SECRET_TEXT' | 'BASIC_AUTH' | 'CUSTOM_AUTH';

/** The declaration as the registry publishes it (JSON). */
export interface PieceAuthInfo {
  type: PieceAuthType;
  displayName: string;
  description?: string;
  /** False: a step may run the action without a connection (`ctx.auth` is then undefined). */
  required: boolean;
  /** What the connection's value must be. */
  schema: JsonSchema;
}

/** A declaration; `T` is the connection's value, `R` whether a step must name one. */
export interface PieceAuth<T, R extends boolean = boolean> extends PieceAuthInfo {
  readonly [AUTH]: true;
  required: R;
  /** Only the type: never set. */
  readonly _type?: T;
}

export function isPieceAuth(value: unknown): value is PieceAuth<unknown, boolean> {
  return typeof value === 'object' && value !== null && (value as Record<symbol, unknown>)[AUTH] === true;
}

interface AuthOptions {
  displayName: string;
  description?: string;
  /** Default true. */
  required?: boolean;
}

/** `required: false` said literally: otherwise a step must name a connection. */
type Required<O extends AuthOptions> = O extends { required: false } ? false : true;

function auth<T, O extends AuthOptions>(
  type: PieceAuthType,
  options: O,
  schema: JsonSchema,
): PieceAuth<T, Required<O>> {
  const declared: PieceAuth<T, Required<O>> = {
    [AUTH]: true,
    type,
    displayName: options.displayName,
    required: (options.required ?? true) as Required<O>,
    schema,
  };
  if (options.description !== undefined) declared.description = options.description;
  return declared;
}

export const PieceAuth = {
  /** A token or API key: the connection's value is a string. */
  SecretText: <const O extends AuthOptions>(options: O) =>
    auth<string, O>('SECRET_TEXT', options, { type: 'string', minLength: 1 }),
  /** The connection's value is `{ "username": "…", "password": "…" }`. */
  BasicAuth: <const O extends AuthOptions>(options: O) =>
    auth<{ username: string; password: string }, O>('BASIC_AUTH', options, {
      type: 'object',
      properties: { username: { type: 'string', minLength: 1 }, password: { type: 'string' } },
      required: ['username', 'password'],
      additionalProperties: false,
    }),
  /** The connection's value is a JSON object of these fields, declared as an action's props are. */
  CustomAuth: <const O extends AuthOptions & { props: Props }>(options: O) =>
    auth<PropsValue<O['props']>, O>(
      'CUSTOM_AUTH',
      options,
      inputSchemaOf(options.displayName, options.props),
    ),
};

/** The value `ctx.auth` holds for a declaration (undefined without one, or when not required). */
export type AuthValue<A> =
  A extends PieceAuth<infer T, infer R> ? (R extends true ? T : T | undefined) : undefined;

/** The declaration as JSON, for the registry. */
export function authInfoOf(declared: PieceAuthInfo): PieceAuthInfo {
  const info: PieceAuthInfo = {
    type: declared.type,
    displayName: declared.displayName,
    required: declared.required,
    schema: declared.schema,
  };
  if (declared.description !== undefined) info.description = declared.description;
  return info;
}
