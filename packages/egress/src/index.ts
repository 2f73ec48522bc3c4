export * from './address-class.ts';
export * from './egress-fetch.ts';
export * from './egress-policy.ts';
export * from './fetch-budget.ts';
