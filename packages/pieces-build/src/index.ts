/**
 * Builds a piece package into what the registry takes (`dist/manifest.json`, `dist/piece.tgz`):
 * shared by `pnpm build` (the built-in pieces) and `flowbox piece build` (anyone's piece).
 */
export * from './piece-archive.ts';
export * from './tar-gz.ts';
export * from './write-if-changed.ts';
export * from './zod-english-only.ts';
